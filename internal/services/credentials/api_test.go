package credentials_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/auth"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// Keys over REST: create (the secret once), use, list (no secret),
// revoke (401 saying so at once), refusals.
func TestAdminKeysREST(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.NewWithAdminKeys(t, st)
		var k servertest.Credential
		servertest.Call(t, env, "POST", "/v1/admin/keys", "acme-admin",
			`{"name": "ci", "permissions": ["workloads.read"], "expires": "90d"}`, 201, &k)
		if !strings.HasPrefix(k.Key, "gpgkey_") || len(k.ID) != 12 || k.OrganizationID != "org-acme" || k.Name != "ci" ||
			strings.Join(k.Permissions, ",") != "workloads.read" || k.ExpiresAt == nil || k.RevokedAt != nil || k.LastUsedAt != nil {
			t.Fatalf("created %+v", k)
		}
		created, _ := time.Parse(time.RFC3339, k.CreatedAt)
		expires, _ := time.Parse(time.RFC3339, *k.ExpiresAt)
		if d := expires.Sub(created); d < 90*24*time.Hour-time.Second || d > 90*24*time.Hour {
			t.Fatalf("expires %s after creation, want 90 days", d)
		}
		servertest.Call(t, env, "GET", "/api/v1/workloads/pods/count", k.Key, "", 200, nil)

		var list struct{ Keys []servertest.Credential }
		raw := servertest.Call(t, env, "GET", "/v1/admin/keys", "acme-admin", "", 200, &list)
		if strings.Contains(string(raw), k.Key) || strings.Contains(string(raw), "token") {
			t.Fatalf("a listing shows a secret: %s", raw)
		}
		var mine *servertest.Credential
		for i, c := range list.Keys {
			if c.OrganizationID != "org-acme" {
				t.Fatalf("acme-admin lists another organization's key %+v", c)
			}
			if c.ID == k.ID {
				mine = &list.Keys[i]
			}
		}
		if mine == nil || len(list.Keys) != 8 { // 5 acme keys of the base, 2 admins, the new one
			t.Fatalf("list has %d keys, mine %v", len(list.Keys), mine)
		}

		var revoked servertest.Credential
		servertest.Call(t, env, "POST", "/v1/admin/keys/"+k.ID+"/revoke", "acme-admin", "", 200, &revoked)
		if revoked.RevokedAt == nil {
			t.Fatalf("revoked %+v", revoked)
		}
		body := servertest.Call(t, env, "GET", "/api/v1/workloads/pods/count", k.Key, "", 401, nil)
		if got, want := servertest.ErrorMessage(t, body), "API key revoked at "+*revoked.RevokedAt; got != want {
			t.Fatalf("message %q, want %q", got, want)
		}
		gql := env.GraphQL(k.Key, `{ podsCount }`, nil)
		if gql.Status != 401 || gql.Errors[0].Message != "API key revoked at "+*revoked.RevokedAt {
			t.Fatalf("graphql %d %+v", gql.Status, gql.Errors)
		}
		// Revoking again changes nothing.
		var again servertest.Credential
		servertest.Call(t, env, "POST", "/v1/admin/keys/"+k.ID+"/revoke", "acme-admin", "", 200, &again)
		if *again.RevokedAt != *revoked.RevokedAt {
			t.Fatalf("second revoke moved revokedAt: %s → %s", *revoked.RevokedAt, *again.RevokedAt)
		}

		for _, c := range []struct {
			token, method, path, body string
			status                    int
			message                   string
		}{
			{"acme-operator", "GET", "/v1/admin/keys", "", 403, "FORBIDDEN: this API key lacks the admin permission"},
			{"", "GET", "/v1/admin/keys", "", 401, "UNAUTHENTICATED: missing API key: send Authorization: Bearer <API key>"},
			{"acme-admin", "POST", "/v1/admin/keys", `{"permissions": ["compute.operate"]}`, 403,
				"PERMISSION_NOT_HELD: you cannot grant compute.operate: you do not hold it"},
			{"acme-admin", "POST", "/v1/admin/keys", `{"permissions": ["root"]}`, 400,
				"BAD_REQUEST: permission \"root\" is not one of compute.read, compute.operate, workloads.read, billing.read, metrics.write, nodes.report, nodes.admin, admin"},
			{"acme-admin", "POST", "/v1/admin/keys", `{"permissions": []}`, 400,
				"BAD_REQUEST: permissions are missing: name at least one of compute.read, compute.operate, workloads.read, billing.read, metrics.write, nodes.report, nodes.admin, admin"},
			{"acme-admin", "POST", "/v1/admin/keys", `{"permissions": ["workloads.read"], "expires": "-3d"}`, 400,
				"BAD_REQUEST: expires \"-3d\": want a number of days from 1 to 36500 (90d), a duration (36h) or an RFC 3339 instant"},
			{"acme-admin", "POST", "/v1/admin/keys", `{"permissions": ["workloads.read"], "expires": "2001-01-01T00:00:00Z"}`, 400,
				"BAD_REQUEST: expires 2001-01-01T00:00:00.000Z is not in the future"},
			// Another organization's key and organization do not exist for acme-admin.
			{"acme-admin", "POST", "/v1/admin/keys", `{"organizationId": "org-globex", "permissions": ["workloads.read"]}`, 404,
				"ORGANIZATION_NOT_FOUND: organization org-globex not found"},
			{"acme-admin", "POST", "/v1/admin/keys/" + keyIDOf(t, st, "globex-operator") + "/revoke", "", 404,
				"API_KEY_NOT_FOUND: API key " + keyIDOf(t, st, "globex-operator") + " not found"},
			{"acme-admin", "POST", "/v1/admin/organizations", `{"id": "org-x", "name": "X", "tenantId": 7}`, 403,
				"FORBIDDEN: this API key lacks the nodes.admin permission"},
		} {
			body := servertest.Call(t, env, c.method, c.path, c.token, c.body, c.status, nil)
			if got := servertest.ErrorMessage(t, body); got != c.message {
				t.Errorf("%s %s %s: %q, want %q", c.token, c.method, c.path, got, c.message)
			}
		}
	})
}

func keyIDOf(t *testing.T, st *store.Store, token string) string {
	t.Helper()
	row, ok, err := st.APIKeyByHash(context.Background(), auth.HashToken(token))
	if err != nil || !ok {
		t.Fatalf("key %s: %v %v", token, ok, err)
	}
	return row.KeyID
}

// The platform operator creates an organization, its first admin key, and
// that admin administers it.
func TestAdminOrganizationsREST(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.NewWithAdminKeys(t, st)
		var org map[string]any
		servertest.Call(t, env, "POST", "/v1/admin/organizations", "platform-admin",
			`{"id": "org-initech", "name": "Initech", "tenantId": 1003}`, 201, &org)
		if org["id"] != "org-initech" || org["state"] != "active" || org["tenantId"] != float64(1003) || org["infinibandEnabled"] != false {
			t.Fatalf("org %v", org)
		}
		body := servertest.Call(t, env, "POST", "/v1/admin/organizations", "platform-admin",
			`{"id": "org-initech", "name": "Initech", "tenantId": 1003}`, 409, nil)
		if got := servertest.ErrorMessage(t, body); got != "ORGANIZATION_EXISTS: organization org-initech exists already" {
			t.Fatal(got)
		}
		var k servertest.Credential
		servertest.Call(t, env, "POST", "/v1/admin/keys", "platform-admin",
			`{"organizationId": "org-initech", "permissions": ["admin"]}`, 201, &k)
		var list struct{ Keys []servertest.Credential }
		servertest.Call(t, env, "GET", "/v1/admin/keys", k.Key, "", 200, &list)
		if len(list.Keys) != 1 || list.Keys[0].ID != k.ID {
			t.Fatalf("the new admin lists %+v", list.Keys)
		}
		servertest.Call(t, env, "GET", "/v1/admin/keys?organizationId=org-acme", k.Key, "", 404, nil)
	})
}

// The same operations through GraphQL.
func TestAdminGraphQL(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.NewWithAdminKeys(t, st)
		var created struct {
			CreateApiKey struct {
				Credential struct {
					ID, OrganizationID, Name string
					Permissions              []string
					ExpiresAt                *string
				}
				Secret string
			}
		}
		env.Decode(env.GraphQL("acme-admin", `mutation { createApiKey(input: {name: "gql", permissions: ["compute.read"], expires: "36h"}) {
			credential { id organizationId name permissions expiresAt } secret } }`, nil), &created)
		k := created.CreateApiKey
		if !strings.HasPrefix(k.Secret, "gpgkey_") || k.Credential.OrganizationID != "org-acme" || k.Credential.Name != "gql" ||
			strings.Join(k.Credential.Permissions, ",") != "compute.read" || k.Credential.ExpiresAt == nil {
			t.Fatalf("created %+v", k)
		}
		var apps struct {
			CreateApplication struct {
				Credential             struct{ ID string }
				ClientID, ClientSecret string
			}
		}
		env.Decode(env.GraphQL("acme-admin", `mutation { createApplication(input: {name: "runapy", permissions: ["workloads.read"]}) {
			credential { id } clientId clientSecret } }`, nil), &apps)
		if apps.CreateApplication.ClientID != apps.CreateApplication.Credential.ID || !strings.HasPrefix(apps.CreateApplication.ClientSecret, "gpgapp_") {
			t.Fatalf("app %+v", apps)
		}
		var lists struct {
			ApiKeys      []struct{ ID string }
			Applications []struct{ ID, Name string }
		}
		env.Decode(env.GraphQL("acme-admin", `{ apiKeys { id } applications { id name } }`, nil), &lists)
		if len(lists.ApiKeys) != 8 || len(lists.Applications) != 1 || lists.Applications[0].Name != "runapy" {
			t.Fatalf("lists %+v", lists)
		}
		var revoked struct {
			RevokeApiKey      struct{ RevokedAt *string }
			RevokeApplication struct{ RevokedAt *string }
		}
		env.Decode(env.GraphQL("acme-admin", `mutation($k: ID!, $a: ID!) { revokeApiKey(id: $k) { revokedAt } revokeApplication(id: $a) { revokedAt } }`,
			map[string]any{"k": k.Credential.ID, "a": apps.CreateApplication.ClientID}), &revoked)
		if revoked.RevokeApiKey.RevokedAt == nil || revoked.RevokeApplication.RevokedAt == nil {
			t.Fatalf("revoked %+v", revoked)
		}
		var org struct {
			CreateOrganization struct {
				ID       string
				TenantId int
			}
		}
		env.Decode(env.GraphQL("platform-admin", `mutation { createOrganization(id: "org-q", name: "Q", tenantId: 9) { id tenantId } }`, nil), &org)
		if org.CreateOrganization.ID != "org-q" || org.CreateOrganization.TenantId != 9 {
			t.Fatalf("org %+v", org)
		}
		r := env.GraphQL("acme-operator", `{ apiKeys { id } }`, nil)
		if r.Code() != "FORBIDDEN" || r.Errors[0].Message != "this API key lacks the admin permission" {
			t.Fatalf("non-admin: %+v", r.Errors)
		}
		r = env.GraphQL("acme-admin", `mutation { createOrganization(id: "org-z", name: "Z", tenantId: 9) { id } }`, nil)
		if r.Code() != "FORBIDDEN" {
			t.Fatalf("admin without nodes.admin created an organization: %+v", r.Errors)
		}
	})
}

// An expired key answers 401 saying when it expired.
func TestExpiredKey(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.NewWithAdminKeys(t, st)
		var k servertest.Credential
		servertest.Call(t, env, "POST", "/v1/admin/keys", "acme-admin", `{"permissions": ["workloads.read"], "expires": "2s"}`, 201, &k)
		servertest.Call(t, env, "GET", "/api/v1/workloads/pods/count", k.Key, "", 200, nil)
		exp, _ := time.Parse(time.RFC3339, *k.ExpiresAt)
		time.Sleep(time.Until(exp) + 50*time.Millisecond)
		body := servertest.Call(t, env, "GET", "/api/v1/workloads/pods/count", k.Key, "", 401, nil)
		if got := servertest.ErrorMessage(t, body); got != "API key expired at "+*k.ExpiresAt {
			t.Fatalf("message %q", got)
		}
	})
}

// lastUsedAt is written off the request's path, at most once a minute.
func TestLastUsedAt(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.NewWithAdminKeys(t, st)
		var k servertest.Credential
		servertest.Call(t, env, "POST", "/v1/admin/keys", "acme-admin", `{"permissions": ["workloads.read"]}`, 201, &k)
		lastUsed := func() *string {
			var list struct{ Keys []servertest.Credential }
			servertest.Call(t, env, "GET", "/v1/admin/keys", "acme-admin", "", 200, &list)
			for _, c := range list.Keys {
				if c.ID == k.ID {
					return c.LastUsedAt
				}
			}
			t.Fatal("key not listed")
			return nil
		}
		if lastUsed() != nil {
			t.Fatal("an unused key has a lastUsedAt")
		}
		servertest.Call(t, env, "GET", "/api/v1/workloads/pods/count", k.Key, "", 200, nil)
		var first *string
		for i := 0; i < 100 && first == nil; i++ {
			time.Sleep(20 * time.Millisecond)
			first = lastUsed()
		}
		if first == nil {
			t.Fatal("lastUsedAt never written")
		}
		servertest.Call(t, env, "GET", "/api/v1/workloads/pods/count", k.Key, "", 200, nil)
		time.Sleep(200 * time.Millisecond)
		if second := lastUsed(); *second != *first {
			t.Fatalf("lastUsedAt rewritten within a minute: %s → %s", *first, *second)
		}
	})
}
