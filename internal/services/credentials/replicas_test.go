package credentials_test

import (
	"testing"
	"time"

	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// Two replicas on one PostgreSQL, each with its own store (connection
// pool), authenticator and token signer: a key made on A works on B; a
// revocation on A holds on B at the very next request; an expiry holds on
// both; an access token from A is accepted by B (they share the stored
// signing key) and stops on B when A revokes its application.
func TestCredentialsAcrossReplicas(t *testing.T) {
	st := storetest.Replicas(t, store.Postgres, 2)
	a := servertest.NewWithAdminKeys(t, st[0])
	b := servertest.New(t, st[1], "")

	var k servertest.Credential
	servertest.Call(t, a, "POST", "/v1/admin/keys", "acme-admin", `{"permissions": ["workloads.read"], "expires": "3s"}`, 201, &k)
	servertest.Call(t, b, "GET", "/api/v1/workloads/pods/count", k.Key, "", 200, nil)
	var other servertest.Credential
	servertest.Call(t, b, "POST", "/v1/admin/keys", "acme-admin", `{"permissions": ["workloads.read"]}`, 201, &other)
	servertest.Call(t, a, "GET", "/api/v1/workloads/pods/count", other.Key, "", 200, nil)
	var revoked servertest.Credential
	servertest.Call(t, a, "POST", "/v1/admin/keys/"+other.ID+"/revoke", "acme-admin", "", 200, &revoked)
	if got := servertest.ErrorMessage(t, servertest.Call(t, b, "GET", "/api/v1/workloads/pods/count", other.Key, "", 401, nil)); got != "API key revoked at "+*revoked.RevokedAt {
		t.Fatalf("B after A revoked: %q", got)
	}

	app := servertest.NewApplication(t, a, `{"permissions": ["workloads.read"]}`)
	var tok servertest.TokenAnswer
	servertest.Call(t, a, "POST", "/api/v1/token", "",
		`{"grantType":"client_credentials","clientId":"`+app.ClientID+`","clientSecret":"`+app.ClientSecret+`"}`, 200, &tok)
	servertest.Call(t, b, "GET", "/api/v1/workloads/pods/count", tok.AccessToken, "", 200, nil)
	var appRevoked servertest.Credential
	servertest.Call(t, b, "POST", "/v1/admin/applications/"+app.ID+"/revoke", "acme-admin", "", 200, &appRevoked)
	if got := servertest.ErrorMessage(t, servertest.Call(t, a, "GET", "/api/v1/workloads/pods/count", tok.AccessToken, "", 401, nil)); got !=
		"application "+app.ID+" revoked at "+*appRevoked.RevokedAt {
		t.Fatalf("A after B revoked the application: %q", got)
	}

	exp, _ := time.Parse(time.RFC3339, *k.ExpiresAt)
	time.Sleep(time.Until(exp) + 50*time.Millisecond)
	for _, env := range []*servertest.Env{a, b} {
		if got := servertest.ErrorMessage(t, servertest.Call(t, env, "GET", "/api/v1/workloads/pods/count", k.Key, "", 401, nil)); got != "API key expired at "+*k.ExpiresAt {
			t.Fatalf("expired key: %q", got)
		}
	}
}
