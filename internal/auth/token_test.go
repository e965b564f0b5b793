package auth

import (
	"context"
	"errors"
	"testing"
	"time"

	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

func issue(t *testing.T, tk *Tokens) string {
	t.Helper()
	now := store.Now()
	tok, err := tk.Issue(context.Background(), "app-1", "org-1", []string{WorkloadsRead}, now, now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func verifies(t *testing.T, tk *Tokens, token string) bool {
	t.Helper()
	c, err := tk.verify(context.Background(), token)
	var api *apierr.Error
	switch {
	case err == nil:
		if c.Subject != "app-1" || c.Organization != "org-1" {
			t.Fatalf("claims %+v", c)
		}
		return true
	case errors.As(err, &api) && api.Status == 401 && api.Message == "invalid access token":
		return false
	default:
		t.Fatalf("verify: %v", err)
		return false
	}
}

// The stored keys rotate: a token signed before a rotation verifies until
// it expires (the replaced key is kept), replicas pick the new key up
// within their refresh, a replica that has not yet verifies a token signed
// with the new one (it reads the keys again), and a dropped key verifies
// nothing at once on a replica that reads it.
func TestStoredKeyRotation(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		replica := func() *Tokens {
			tk, err := NewTokens(st, []byte{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			return tk
		}
		a, b := replica(), replica()
		b.retry = 0 // b may read the keys again at once when a token fails
		before := issue(t, a)
		if !verifies(t, b, before) {
			t.Fatal("replicas do not share the stored key")
		}
		if err := st.RotateSigningKey(ctx, NewSigningKey(), true, store.Now()); err != nil {
			t.Fatal(err)
		}
		c := replica() // reads the rotated keys
		after := issue(t, c)
		if after == before || !verifies(t, c, before) {
			t.Fatal("a token signed before the rotation stopped verifying")
		}
		if !verifies(t, b, after) {
			t.Fatal("a replica holding the old key refused a token signed with the new one")
		}
		a.refresh = 0
		if tok := issue(t, a); !verifies(t, replica(), tok) || tok == before {
			t.Fatal("a replica past its refresh still signs with the old key")
		}

		if err := st.RotateSigningKey(ctx, NewSigningKey(), false, store.Now()); err != nil {
			t.Fatal(err)
		}
		d := replica()
		if verifies(t, d, before) || verifies(t, d, after) {
			t.Fatal("a dropped key still verifies")
		}
		if !verifies(t, d, issue(t, d)) {
			t.Fatal("the new key does not verify its own token")
		}
	})
}

// A configured key signs; the configured previous one only verifies; an
// empty key is no key (the stored one is used); short keys are refused.
func TestConfiguredKeys(t *testing.T) {
	st := storetest.Open(t, store.SQLite)
	oldKey, newKey := []byte("an-old-key-that-is-at-least-32-bytes-long"), []byte("a-new-key-that-is-at-least-32-bytes-long!")
	old, err := NewTokens(st, oldKey, nil)
	if err != nil {
		t.Fatal(err)
	}
	signedOld := issue(t, old)
	rolled, err := NewTokens(st, newKey, oldKey)
	if err != nil {
		t.Fatal(err)
	}
	if !verifies(t, rolled, signedOld) || !verifies(t, rolled, issue(t, rolled)) {
		t.Fatal("the previous key does not verify its tokens, or the new one its own")
	}
	if verifies(t, old, issue(t, rolled)) {
		t.Fatal("a token signed with the new key verified with the old one alone")
	}
	stored, _ := NewTokens(st, []byte{}, nil)
	if stored.fixed != nil || verifies(t, stored, signedOld) {
		t.Fatal("an empty key is a key")
	}
	for _, keys := range [][2][]byte{{[]byte("short"), nil}, {newKey, []byte("short")}, {nil, oldKey}} {
		if _, err := NewTokens(st, keys[0], keys[1]); err == nil {
			t.Errorf("NewTokens(%q, %q) accepted", keys[0], keys[1])
		}
	}
}
