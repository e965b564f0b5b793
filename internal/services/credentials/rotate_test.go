package credentials

import (
	"context"
	"testing"

	"gpugraph/internal/auth"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// The access-token signing key is the whole deployment's: an
// organization's admin key may not rotate it (403 naming nodes.admin, the
// keys untouched); the command line (the system caller) may, keeping the
// replaced key as the previous one or forgetting it.
func TestRotateSigningKey(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		s, sys := New(st, nil), auth.SystemCaller()
		first, _, err := st.SigningKeys(ctx, "the-first-signing-key-of-this-deployment")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateOrganization(ctx, sys, Organization{ID: "org-a", Name: "A", TenantID: 1}); err != nil {
			t.Fatal(err)
		}
		k, err := s.CreateKey(ctx, sys, Spec{OrganizationID: "org-a", Permissions: []string{auth.Admin}})
		if err != nil {
			t.Fatal(err)
		}
		authn := &auth.Authenticator{Store: st}
		orgAdmin, err := authn.Lookup(ctx, k.Secret)
		if err != nil {
			t.Fatal(err)
		}
		authn.WaitUsage() // its lastUsedAt, recorded beside the lookup
		err = s.RotateSigningKey(ctx, orgAdmin, true)
		if e, ok := apierr.As(err); !ok || e.Status != 403 || e.Message != "this API key lacks the nodes.admin permission" {
			t.Errorf("an organization's admin key rotates: %v, want 403 lacking nodes.admin", err)
		}
		if cur, prev, err := st.SigningKeys(ctx, "unused"); err != nil || cur != first || prev != "" {
			t.Errorf("after the refusal: current %q, previous %q, %v; want the first key alone", cur, prev, err)
		}

		if err := s.RotateSigningKey(ctx, sys, true); err != nil {
			t.Fatal(err)
		}
		second, prev, err := st.SigningKeys(ctx, "unused")
		if err != nil || second == first || len(second) < auth.MinSigningKeyLen || prev != first {
			t.Errorf("rotated keeping the previous: current %q, previous %q, %v; want a fresh key, then the first", second, prev, err)
		}
		if err := s.RotateSigningKey(ctx, sys, false); err != nil {
			t.Fatal(err)
		}
		if cur, prev, err := st.SigningKeys(ctx, "unused"); err != nil || cur == second || cur == first || prev != "" {
			t.Errorf("rotated dropping the previous: current %q, previous %q, %v; want a fresh key alone", cur, prev, err)
		}
	})
}
