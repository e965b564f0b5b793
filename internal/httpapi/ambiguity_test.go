package httpapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// Issue 23, finding 12: what the REST paths read leniently is refused,
// each with a 400 (404 for a path) in the API's own shape naming what was
// wrong: a parameter that takes one value given twice, an integer spelt
// otherwise than JSON spells it, a path with an empty, "." or ".."
// segment (Go's mux answered a 307 to the cleaned path, with HTML), a
// body with a name given twice or data after it.
func TestRESTRefusesAmbiguity(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, servertest.Base)
		for _, tc := range []struct {
			method, path, token, body string
			status                    int
			want                      string
		}{
			{"GET", "/api/v1/workloads/pods?limit=5&limit=500", "acme-workloads", "", 400, `{"code":400,"message":"limit is given 2 times; it takes one value"`},
			{"GET", "/api/v1/workloads/pods?sortBy=name&sortBy=nodeName", "acme-workloads", "", 400, `"message":"sortBy is given 2 times; it takes one value"`},
			{"GET", "/api/v1/workloads/pods/count?deleted=true&deleted=false", "acme-workloads", "", 400, `"message":"deleted is given 2 times; it takes one value"`},
			{"GET", "/v1/vms?limit=1&limit=2", "acme-reader", "", 400, `{"error":{"code":"BAD_REQUEST","message":"limit is given 2 times; it takes one value"`},
			{"GET", "/api/v1/workloads/pods?limit=%2B5", "acme-workloads", "", 400, `"message":"limit must be an integer, got \"+5\""`},
			{"GET", "/api/v1/workloads/pods?offset=05", "acme-workloads", "", 400, `"message":"offset must be an integer, got \"05\""`},
			{"GET", "/v1/vms/vm-acme-1/events?after=%2B1", "acme-reader", "", 400, `"message":"after must be an event id (a whole number), got \"+1\""`},
			{"GET", "/v1/vms//vm-acme-1", "acme-reader", "", 404, `{"error":{"code":"NOT_FOUND","message":"no such path: GET /v1/vms//vm-acme-1 (a path has no empty, \".\" or \"..\" segment)"`},
			// An empty segment where a pattern has a wildcard: the answer names it.
			{"GET", "/v1/vms//restart", "acme-reader", "", 404, `{"error":{"code":"NOT_FOUND","message":"no such path: GET /v1/vms//restart: the {id} of /v1/vms/{id}/restart is empty"`},
			{"POST", "/v1/vms//restart", "acme-operator", "", 404, `"message":"no such path: POST /v1/vms//restart: the {id} of /v1/vms/{id}/restart is empty"`},
			{"GET", "/v1/vms//events", "acme-reader", "", 404, `"message":"no such path: GET /v1/vms//events: the {id} of /v1/vms/{id}/events is empty"`},
			{"GET", "/api/v1/workloads//pods/p1/metrics", "acme-workloads", "", 404, `{"code":404,"message":"no such path: GET /api/v1/workloads//pods/p1/metrics: the {workloadId} of /api/v1/workloads/{workloadId}/pods/{podId}/metrics is empty"`},
			{"GET", "/api/v1/workloads//pods//metrics", "acme-workloads", "", 404, `"message":"no such path: GET /api/v1/workloads//pods//metrics: the {workloadId} and {podId} of /api/v1/workloads/{workloadId}/pods/{podId}/metrics are empty"`},
			{"GET", "/v1//vms", "acme-reader", "", 404, `"message":"no such path: GET /v1//vms (a path has no empty, \".\" or \"..\" segment)"`},
			{"GET", "/v1/vms/x/../vm-acme-1", "acme-reader", "", 404, `"code":"NOT_FOUND"`},
			{"GET", "/api/v1/workloads//pods", "acme-workloads", "", 404, `{"code":404,"message":"no such path: GET /api/v1/workloads//pods: the {workloadId} of /api/v1/workloads/{workloadId}/pods is empty"`},
			{"POST", "/v1/admin/organizations", "platform-admin", `{"id": "org-x", "name": "X", "tenantId": 5, "tenantId": 6}`, 400,
				`"message":"tenantId is given twice: a name appears at most once in an object"`},
			{"POST", "/v1/admin/organizations", "platform-admin", `{"id": "org-x", "name": "X", "tenantId": 5} {"id": "org-y"}`, 400,
				`"message":"the request body holds data after its JSON value, which ends at byte 43"`},
			{"POST", "/v1/admin/organizations", "platform-admin", `{"id": "org-x", "name": "X", "tenantID": 5}`, 400,
				`"message":"the request body: unknown field \"tenantID\""`},
		} {
			if strings.HasPrefix(tc.path, "/v1/admin") {
				servertest.NewWithAdminKeys(t, st)
			}
			status, body := env.Do(tc.method, tc.path, tc.token, []byte(tc.body), nil)
			if status != tc.status || !strings.Contains(string(body), tc.want) || !json.Valid(body) {
				t.Errorf("%s %s %s: %d %s\nwant %d containing %s", tc.method, tc.path, tc.body, status, body, tc.status, tc.want)
			}
		}
		// The list parameters still repeat.
		for _, path := range []string{"/api/v1/workloads/pods?filterBy=name%3D%3Dx&filterBy=nodeName%3D%3Dy", "/v1/vms?status=running&status=stopped"} {
			token := "acme-workloads"
			if strings.HasPrefix(path, "/v1") {
				token = "acme-reader"
			}
			if status, body := env.Do(http.MethodGet, path, token, nil, nil); status != 200 {
				t.Errorf("%s: %d %s", path, status, body)
			}
		}
	})
}

// /graphql answers a method it does not take with a 405 naming it, Allow
// listing what it takes and GraphQL's error shape, whether a credential
// came or not (as the REST paths' mux answers before any credential);
// OPTIONS lists the methods to anyone.
func TestGraphQLOtherMethods(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, servertest.Base)
		for _, m := range []string{"PUT", "DELETE", "PATCH", "HEAD", "TRACE"} {
			for _, token := range []string{"acme-reader", "", "nope"} {
				resp := env.Request(m, "/graphql", token, []byte(`{"query": "{ vms { total } }"}`), http.Header{"Content-Type": {"application/json"}})
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				want := `{"errors":[{"extensions":{"code":"METHOD_NOT_ALLOWED","requestId":"servertest","status":405},"message":"/graphql does not take ` + m + `; it takes GET and POST (OPTIONS lists them)"}]}`
				if m == "HEAD" {
					want = "" // no body to a HEAD
				}
				if resp.StatusCode != 405 || resp.Header.Get("Allow") != "GET, POST, OPTIONS" || resp.Header.Get("Content-Type") != "application/json" ||
					strings.TrimSpace(string(b)) != want {
					t.Errorf("%s /graphql (key %q): %d Allow %q %q %s", m, token, resp.StatusCode, resp.Header.Get("Allow"), resp.Header.Get("Content-Type"), b)
				}
			}
		}
		for _, token := range []string{"acme-reader", ""} {
			resp := env.Request("OPTIONS", "/graphql", token, nil, nil)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 204 || resp.Header.Get("Allow") != "GET, POST, OPTIONS" || len(b) != 0 {
				t.Errorf("OPTIONS /graphql (key %q): %d Allow %q %s", token, resp.StatusCode, resp.Header.Get("Allow"), b)
			}
		}
		// GET and POST still ask for the credential first.
		if s, b := env.Do("POST", "/graphql", "", []byte(`{"query": "{ vms { total } }"}`), http.Header{"Content-Type": {"application/json"}}); s != 401 {
			t.Errorf("POST /graphql without a key: %d %s", s, b)
		}
	})
}
