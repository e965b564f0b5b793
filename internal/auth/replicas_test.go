package auth

import (
	"context"
	"sync"
	"testing"
	"time"

	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// Replicas starting at once agree on one signing key: each proposes its
// own, one insert wins, every replica reads the winner.
func TestSigningKeyAgreement(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		const n = 8
		keys := make([]string, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				tokens, _ := NewTokens(st, nil, nil)
				tok, err := tokens.Issue(context.Background(), "app-x", "org-acme", []string{"workloads.read"}, store.Now(), store.Now().Add(time.Hour))
				if err != nil {
					t.Error(err)
					return
				}
				keys[i] = tok
			}()
		}
		wg.Wait()
		secret, _, err := st.SigningKeys(context.Background(), "never-used")
		if err != nil || secret == "never-used" || len(secret) < 43 {
			t.Fatalf("stored key %q, %v", secret, err)
		}
		verifier, _ := NewTokens(st, nil, nil)
		authn := &Authenticator{Store: st, Tokens: verifier}
		for _, tok := range keys {
			// The application does not exist: reaching that check means the
			// signature verified with the shared key.
			_, err := authn.Lookup(context.Background(), tok)
			if err == nil || err.Error() != "the access token's application no longer exists" {
				t.Fatalf("token of a replica: %v", err)
			}
		}
	})
}
