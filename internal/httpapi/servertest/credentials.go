package servertest

import (
	"context"
	"strings"
	"testing"

	"gpugraph/internal/dataset"
	"gpugraph/internal/store"
)

// AdminKeys are administrators added to the base fixture: acme-admin
// administers org-acme; platform-admin (admin with nodes.admin) every
// organization.
const AdminKeys = `{"apiKeys": [
  {"token": "acme-admin", "organizationId": "org-acme", "permissions": ["admin", "workloads.read", "compute.read"]},
  {"token": "platform-admin", "organizationId": "org-acme", "permissions": ["admin", "nodes.admin", "workloads.read"]}
]}`

// NewWithAdminKeys is New on Base with AdminKeys loaded as well.
func NewWithAdminKeys(t testing.TB, st *store.Store) *Env {
	t.Helper()
	env := New(t, st, Base)
	if _, err := dataset.LoadFile(context.Background(), st, []byte(AdminKeys)); err != nil {
		t.Fatal(err)
	}
	return env
}

// Credential is an API key or an application as the administration API
// answers it (Key once, at creation; ClientID and ClientSecret for an
// application).
type Credential struct {
	ID             string   `json:"id"`
	OrganizationID string   `json:"organizationId"`
	Name           string   `json:"name"`
	Permissions    []string `json:"permissions"`
	CreatedAt      string   `json:"createdAt"`
	LastUsedAt     *string  `json:"lastUsedAt"`
	ExpiresAt      *string  `json:"expiresAt"`
	RevokedAt      *string  `json:"revokedAt"`
	Key            string   `json:"key"`
	ClientID       string   `json:"clientId"`
	ClientSecret   string   `json:"clientSecret"`
}

// TokenAnswer is what POST /api/v1/token answers.
type TokenAnswer struct {
	AccessToken string `json:"accessToken"`
	IDToken     string `json:"idToken"`
	ExpiresIn   int    `json:"expiresIn"`
}

// NewApplication creates an application as acme-admin (an Env of
// NewWithAdminKeys) from body, and checks its id and secret's shape.
func NewApplication(t testing.TB, env *Env, body string) Credential {
	t.Helper()
	var a Credential
	Call(t, env, "POST", "/v1/admin/applications", "acme-admin", body, 201, &a)
	if !strings.HasPrefix(a.ClientSecret, "gpgapp_") || a.ClientID != a.ID || !strings.HasPrefix(a.ID, "app-") {
		t.Fatalf("application %+v", a)
	}
	return a
}
