package httpapi_test

import (
	"encoding/json"
	"net/url"
	"testing"

	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// A path or query parameter that PostgreSQL's text cannot hold (%00,
// bytes that are not UTF-8) is a 400 naming it on every route, in the
// route's API's shape, before authentication, on both engines: no route's
// handler or statement sees it (it was a 500 on PostgreSQL where a handler
// did not check it).
func TestNonTextPathsAndParameters(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.NewWithAdminKeys(t, st)
		openRelay := func(what string, status int, body []byte) string {
			return servertest.OpenRelayError(t, what, status, string(body), 400)
		}
		runai := func(what string, status int, body []byte) string {
			return servertest.RunaiError(t, what, status, string(body), 400)
		}
		for _, c := range []struct {
			name, method, path, token string
			shape                     func(string, int, []byte) string
			want                      string
		}{
			{"NUL in the revoke path", "POST", "/v1/admin/clusters/a%00/revoke", "platform-admin", openRelay, "clusterId contains a NUL character"},
			{"NUL in the revoke path, no key", "POST", "/v1/admin/clusters/a%00/revoke", "", openRelay, "clusterId contains a NUL character"},
			{"bad UTF-8 in the revoke path", "POST", "/v1/admin/clusters/a%FF/revoke", "platform-admin", openRelay, "clusterId is not valid UTF-8"},
			{"NUL in the sync path", "POST", "/api/v1/clusters/a%00/sync", "gpgcl_x", runai, "clusterId contains a NUL character"},
			{"NUL in an admin query parameter", "GET", "/v1/admin/keys?organizationId=org-acme%00", "acme-admin", openRelay, "organizationId contains a NUL character"},
			{"bad UTF-8 in a query parameter", "GET", "/v1/admin/applications?organizationId=%C3", "acme-admin", openRelay, "organizationId is not valid UTF-8"},
			{"NUL in a Run:ai query parameter", "GET", "/api/v1/workloads/pods?search=a%00", "acme-workloads", runai, "search contains a NUL character"},
			{"NUL in a parameter's name", "GET", "/api/v1/workloads/pods?x%00=1", "acme-workloads", runai, "a parameter name contains a NUL character"},
			{"NUL in a node id", "PUT", "/v1/admin/nodes/n%00/leaving-at", "platform-admin", openRelay, "id contains a NUL character"},
		} {
			status, body := env.Do(c.method, c.path, c.token, []byte(`{}`), nil)
			if got := c.shape(c.name, status, body); got != c.want {
				t.Errorf("%s: %q, want %q", c.name, got, c.want)
			}
		}

		// GraphQL's: the query parameter of a GET, and a variable.
		status, body := env.Do("GET", "/graphql?query="+url.QueryEscape("{ vm(id: \"a\x00\") { id } }"), "acme-reader", nil, nil)
		var r struct {
			Errors []struct {
				Message    string
				Extensions struct{ Code string }
			}
		}
		if status != 400 || json.Unmarshal(body, &r) != nil || len(r.Errors) != 1 || r.Errors[0].Message != "query contains a NUL character" ||
			r.Errors[0].Extensions.Code != "BAD_REQUEST" {
			t.Errorf("GET /graphql with a NUL: %d %s", status, body)
		}
		for _, c := range []struct {
			query string
			vars  map[string]any
			want  string
		}{
			{`query ($id: ID!) { vm(id: $id) { id } }`, map[string]any{"id": "a\x00b"}, "argument id of vm contains a NUL character"},
			{`query ($s: String) { pods(search: $s) { total } }`, map[string]any{"s": "a\x00"}, "argument search of pods contains a NUL character"},
			{`query ($f: [String!]) { pods(filterBy: $f) { total } }`, map[string]any{"f": []string{"name==a", "name==\x00"}}, "argument filterBy of pods contains a NUL character"},
		} {
			r := env.GraphQL("acme-workloads", c.query, c.vars)
			if r.Status != 400 || len(r.Errors) != 1 || r.Code() != "BAD_REQUEST" || r.Errors[0].Message != c.want {
				t.Errorf("%s: %d %+v, want a 400 %q", c.query, r.Status, r.Errors, c.want)
			}
		}
	})
}
