package httpapi_test

import (
	"strings"
	"testing"

	"gpugraph/internal/httpapi"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

func TestHealthMetricsPlayground(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		// Operation names are labels only from the allowlist.
		env := servertest.NewWithConfig(t, st, servertest.Base, httpapi.Config{OperationNames: []string{"Fleet"}})
		if status, body := env.Do("GET", "/healthz", "", nil, nil); status != 200 || string(body) != "ok\n" {
			t.Errorf("healthz = %d %q", status, body)
		}
		env.GraphQL("acme-reader", `query Fleet { nodes { id } }`, nil)
		status, body := env.Do("GET", "/metrics", "", nil, nil)
		for _, want := range []string{
			`gpugraph_http_requests_total{code="200",method="POST",path="/graphql"} 1`,
			`gpugraph_graphql_operations_total{errors="false",operation="Fleet",type="query"} 1`,
			`gpugraph_http_request_duration_seconds_bucket{method="GET",path="GET /healthz",le="+Inf"} 1`,
		} {
			if status != 200 || !strings.Contains(string(body), want) {
				t.Errorf("/metrics lacks %s", want)
			}
		}
		status, body = env.Do("GET", "/", "", nil, nil)
		if status != 200 || !strings.Contains(string(body), "assets/graphiql.js") {
			t.Errorf("playground = %d", status)
		}
		// The console: its page on every path of the app, its assets
		// under /console/assets/ only.
		for _, path := range []string{"/console", "/console/", "/console/vms"} {
			if status, body := env.Do("GET", path, "", nil, nil); status != 200 || !strings.Contains(string(body), "/console/assets/console.js?v=") {
				t.Errorf("console at %s = %d", path, status)
			}
		}
		if status, _ := env.Do("GET", "/console/assets/console.css", "", nil, nil); status != 200 {
			t.Errorf("console's stylesheet = %d", status)
		}
		if status, _ := env.Do("GET", "/console/assets/missing.js", "", nil, nil); status != 404 {
			t.Errorf("a missing console asset = %d, want 404", status)
		}
		// The database going away turns health red.
		st.Close()
		if status, _ := env.Do("GET", "/healthz", "", nil, nil); status != 503 {
			t.Errorf("healthz with the database closed = %d", status)
		}
	})
}
