package credentials_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// viewer answers the caller's own credential, organization and
// permissions, for an API key and for an application's access token; no
// credential is a 401.
func TestViewer(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.NewWithAdminKeys(t, st)
		const q = `{ viewer { credentialId organizationId organizationName permissions } }`
		viewer := func(token string) models.Viewer {
			t.Helper()
			r := env.GraphQL(token, q, nil)
			var d struct{ Viewer models.Viewer }
			if r.Status != 200 || len(r.Errors) != 0 || json.Unmarshal(r.Data, &d) != nil {
				t.Fatalf("%s: %d %s %+v", token, r.Status, r.Data, r.Errors)
			}
			return d.Viewer
		}
		for _, c := range []struct {
			token string
			want  models.Viewer
		}{
			{"acme-operator", models.Viewer{CredentialID: keyIDOf(t, st, "acme-operator"), OrganizationID: "org-acme",
				OrganizationName: "Acme", Permissions: []string{"compute.read", "compute.operate", "workloads.read"}}},
			{"globex-operator", models.Viewer{CredentialID: keyIDOf(t, st, "globex-operator"), OrganizationID: "org-globex",
				OrganizationName: "Globex", Permissions: []string{"compute.read", "compute.operate", "workloads.read"}}},
		} {
			if got := viewer(c.token); !reflect.DeepEqual(got, c.want) {
				t.Errorf("%s: %+v, want %+v", c.token, got, c.want)
			}
		}

		app := servertest.NewApplication(t, env, `{"permissions": ["workloads.read"]}`)
		var tok servertest.TokenAnswer
		servertest.Call(t, env, "POST", "/api/v1/token", "",
			`{"grantType":"client_credentials","clientId":"`+app.ClientID+`","clientSecret":"`+app.ClientSecret+`"}`, 200, &tok)
		want := models.Viewer{CredentialID: app.ClientID, OrganizationID: "org-acme", OrganizationName: "Acme", Permissions: []string{"workloads.read"}}
		if got := viewer(tok.AccessToken); !reflect.DeepEqual(got, want) {
			t.Errorf("access token: %+v, want %+v", got, want)
		}

		if r := env.GraphQL("", q, nil); r.Status != 401 || len(r.Errors) != 1 || r.Errors[0].Message != "missing API key: send Authorization: Bearer <API key>" {
			t.Errorf("no key: %d %+v", r.Status, r.Errors)
		}
	})
}
