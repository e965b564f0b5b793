package httpapi_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"gpugraph/internal/httpapi"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// exposition is /metrics with every sample's value cut off: the series
// the server exposes, one per line, whatever their counts.
func exposition(t *testing.T, env *servertest.Env) (series []string, size int) {
	t.Helper()
	status, body := env.Do(http.MethodGet, "/metrics", "", nil, nil)
	if status != http.StatusOK {
		t.Fatalf("/metrics: %d", status)
	}
	for _, line := range strings.Split(string(body), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		series = append(series, line[:strings.LastIndexByte(line, ' ')])
	}
	return series, len(strings.Join(series, "\n"))
}

// Issue 23, finding 6: every label of every series takes its value from a
// closed set, so thousands of requests with invented methods, paths, ids
// and operation names (persisted ones included) add no series and no byte
// to /metrics once each kind of request has been seen once. The server's
// counters live in memory, not in the database: one engine is enough.
func TestMetricsLabelsAreClosed(t *testing.T) {
	t.Parallel() // the slowest of the package: they overlap each other (own servers, stores and ports)
	st := storetest.Open(t, store.SQLite)
	env := servertest.NewWithConfig(t, st, servertest.Base, httpapi.Config{OperationNames: []string{"Fleet"}})

	persisted := func(name string) {
		query := "query " + name + " { vms(limit: 1) { total } }"
		sum := sha256.Sum256([]byte(query))
		ext := map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hex.EncodeToString(sum[:])}}
		for _, body := range []map[string]any{{"query": query, "extensions": ext}, {"extensions": ext}} {
			b, _ := json.Marshal(body)
			if status, resp := env.Do(http.MethodPost, "/graphql", "acme-reader", b, nil); status != http.StatusOK {
				t.Fatalf("persisted %s: %d %s", name, status, resp)
			}
		}
	}
	kinds := []func(i int){
		func(i int) { env.Do(fmt.Sprintf("INVENTED%d", i), "/graphql", "acme-reader", nil, nil) },
		func(i int) { env.Do(fmt.Sprintf("INVENTED%d", i), "/v1/vms", "acme-reader", nil, nil) },
		func(i int) { env.Do(fmt.Sprintf("INVENTED%d", i), fmt.Sprintf("/nowhere/%d", i), "", nil, nil) },
		func(i int) { env.Do(http.MethodGet, fmt.Sprintf("/nowhere/%d", i), "", nil, nil) },
		func(i int) { env.Do(http.MethodGet, fmt.Sprintf("/v1/vms/vm-%d", i), "acme-reader", nil, nil) },
		func(i int) {
			env.Do(http.MethodGet, fmt.Sprintf("/api/v1/workloads/w-%d/pods", i), "acme-workloads", nil, nil)
		},
		func(i int) { env.GraphQL("acme-reader", fmt.Sprintf("query Op%d { vms(limit: 1) { total } }", i), nil) },
		func(i int) { persisted(fmt.Sprintf("Persisted%d", i)) },
	}
	env.GraphQL("acme-reader", `query Fleet { nodes { id } }`, nil)
	for _, k := range kinds {
		k(0)
	}
	exposition(t, env) // a scrape's own series
	before, size := exposition(t, env)
	for i := 1; i <= 600; i++ {
		for _, k := range kinds {
			k(i)
		}
	}
	after, sizeAfter := exposition(t, env)
	if len(after) != len(before) || sizeAfter != size {
		t.Errorf("4,800 requests of kinds seen once before took /metrics from %d series (%d bytes without values) to %d (%d bytes)",
			len(before), size, len(after), sizeAfter)
	}
	if got, want := strings.Join(after, "\n"), strings.Join(before, "\n"); got != want {
		t.Errorf("the series changed:\n%s", seriesDiff(before, after))
	}
	page := strings.Join(after, "\n")
	for _, want := range []string{
		`gpugraph_http_requests_total{code="405",method="other",path="unmatched"}`,
		`gpugraph_http_requests_total{code="404",method="GET",path="GET /v1/vms/{id}"}`,
		`gpugraph_graphql_operations_total{errors="false",operation="other",type="query"}`,
		`gpugraph_graphql_operations_total{errors="false",operation="Fleet",type="query"}`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	for _, leak := range []string{"INVENTED", "nowhere", "vm-1", "Op1", "Persisted"} {
		if strings.Contains(page, leak) {
			t.Errorf("a label holds what a client sent (%q)", leak)
		}
	}
}

// seriesDiff lists the series only one of a and b holds.
func seriesDiff(a, b []string) string {
	in := func(list []string) map[string]bool {
		m := map[string]bool{}
		for _, l := range list {
			m[l] = true
		}
		return m
	}
	ina, inb := in(a), in(b)
	var out []string
	for _, l := range a {
		if !inb[l] {
			out = append(out, "- "+l)
		}
	}
	for _, l := range b {
		if !ina[l] {
			out = append(out, "+ "+l)
		}
	}
	if len(out) > 20 {
		out = append(out[:20], fmt.Sprintf("… %d more", len(out)-20))
	}
	return strings.Join(out, "\n")
}
