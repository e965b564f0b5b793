package httpapi_test

import (
	"fmt"
	"strings"
	"testing"

	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/httpapi"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/lib/ratelimit"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// Issue 14, per-key rate limits: 429 with Retry-After in each API's
// shape, per credential, restarts and ingestion on their own budgets, a
// counter of refusals.

// slow is a budget that does not refill within a test: burst, then 429.
func slow(burst int) ratelimit.Limit { return ratelimit.Limit{Rate: 0.001, Burst: burst} }

func TestRateLimitPerKey(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.NewWithConfig(t, st, servertest.Base, httpapi.Config{
			RateLimits: map[ratelimit.Class]ratelimit.Limit{ratelimit.API: slow(2)},
		})
		gql := []byte(`{"query":"{ podsCount }"}`)
		for i := 0; i < 2; i++ {
			if s, b := env.Do("GET", "/api/v1/workloads/pods/count", "acme-operator", nil, nil); s != 200 {
				t.Fatalf("request %d of the burst: %d %s", i+1, s, b)
			}
		}
		for _, tc := range []struct{ method, path, body string }{
			{"GET", "/api/v1/workloads/pods/count", `{"code":429,"message":"this credential sent more requests than its rate limit allows; retry in 1000 s","requestId":"servertest"}`},
			{"GET", "/v1/vms", `{"error":{"code":"RATE_LIMITED","message":"this credential sent more requests than its rate limit allows; retry in 1000 s","requestId":"servertest"}}`},
			{"POST", "/graphql", `{"errors":[{"extensions":{"code":"RATE_LIMITED","requestId":"servertest","retryAfter":1000,"status":429},"message":"this credential sent more requests than its rate limit allows; retry in 1000 s"}]}`},
		} {
			var body []byte
			if tc.method == "POST" {
				body = gql
			}
			resp := env.Request(tc.method, tc.path, "acme-operator", body, nil)
			got := strings.TrimSpace(readAll(t, resp))
			if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "1000" || got != tc.body {
				t.Errorf("%s %s over the budget: %d Retry-After %q %s\nwant 429 1000 %s", tc.method, tc.path,
					resp.StatusCode, resp.Header.Get("Retry-After"), got, tc.body)
			}
		}
		// Another credential has its own bucket; an unknown key is a 401,
		// not a 429; the agent's reports are not limited.
		if s, b := env.Do("GET", "/api/v1/workloads/pods/count", "globex-operator", nil, nil); s != 200 {
			t.Errorf("another key: %d %s", s, b)
		}
		if s, _ := env.Do("GET", "/api/v1/workloads/pods/count", "nope", nil, nil); s != 401 {
			t.Errorf("unknown key: %d, want 401", s)
		}
		cred := servertest.NodeCredential(t, st, "gpu-node-1", "71f69d83-ba66-4822-adf5-55ce55efd210")
		for i := 0; i < 4; i++ {
			hb := fmt.Sprintf(`{"nodeName":"gpu-node-1","agentVersion":"2.6.1","sequence":%d}`, servertest.Sequence())
			if s, b := env.Do("POST", agentapi.HeartbeatPath, cred, []byte(hb), nil); s != 200 {
				t.Errorf("agent heartbeat %d: %d %s", i+1, s, b)
			}
		}
		_, metrics := env.Do("GET", "/metrics", "", nil, nil)
		for _, line := range []string{
			`gpugraph_rate_limited_total{class="api",face="runai"} 1`,
			`gpugraph_rate_limited_total{class="api",face="openrelay"} 1`,
			`gpugraph_rate_limited_total{class="api",face="graphql"} 1`,
			`gpugraph_rate_limited_total{class="restart",face="graphql"} 0`,
		} {
			if !strings.Contains(string(metrics), line+"\n") {
				t.Errorf("/metrics lacks %s", line)
			}
		}
	})
}

func TestRateLimitRestartsAndIngestion(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.NewWithConfig(t, st, servertest.Base, httpapi.Config{
			RateLimits: map[ratelimit.Class]ratelimit.Limit{ratelimit.Restart: slow(2), ratelimit.Ingest: slow(1)},
		})
		restarts := func(n int) string {
			var b strings.Builder
			b.WriteString("mutation {")
			for i := 0; i < n; i++ {
				fmt.Fprintf(&b, " r%d: restartVm(id: \"vm-acme-2\") { id }", i)
			}
			return b.String() + " }"
		}
		// Three restarts in one mutation are over a burst of 2: refused
		// whole before any runs, so the answer has no data entry.
		r := env.GraphQL("acme-operator", restarts(3), nil)
		if r.Status != 429 || r.Code() != "RATE_LIMITED" || r.Data != nil || r.Errors[0].Extensions["retryAfter"] != float64(2000) {
			t.Fatalf("3 restarts: %d %s %+v", r.Status, r.Data, r.Errors)
		}
		var status string
		storetest.Scan(t, st, &status, "SELECT status FROM vms WHERE id = 'vm-acme-2'")
		if status != "stopped" {
			t.Fatalf("vm-acme-2 is %q after a refused mutation, want stopped", status)
		}
		if r := env.GraphQL("acme-operator", restarts(2), nil); r.Status != 200 || r.Code() == "RATE_LIMITED" {
			t.Fatalf("2 restarts: %d %+v", r.Status, r.Errors)
		}
		// REST restarts spend the same budget; reads do not.
		resp := env.Request("POST", "/v1/vms/vm-acme-2/restart", "acme-operator", nil, nil)
		body := readAll(t, resp)
		if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "1000" || !strings.Contains(body, `"code":"RATE_LIMITED","message":"this credential sent more restarts than`) {
			t.Errorf("REST restart over the budget: %d %s", resp.StatusCode, body)
		}
		if s, b := env.Do("GET", "/v1/vms/vm-acme-2", "acme-operator", nil, nil); s != 200 {
			t.Errorf("a read after the restarts: %d %s", s, b)
		}
		batch := []byte(`{"podMetrics": []}`)
		if s, b := env.Do("POST", "/api/v1/metrics/samples", "acme-metrics", batch, nil); s == 429 {
			t.Fatalf("first batch: %d %s", s, b)
		}
		resp = env.Request("POST", "/api/v1/metrics/samples", "acme-metrics", batch, nil)
		body = readAll(t, resp)
		if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "1000" ||
			!strings.Contains(body, `{"code":429,"message":"this credential sent more metric ingestions than`) {
			t.Errorf("second batch: %d %s", resp.StatusCode, body)
		}
		_, metrics := env.Do("GET", "/metrics", "", nil, nil)
		for _, line := range []string{
			`gpugraph_rate_limited_total{class="restart",face="graphql"} 1`,
			`gpugraph_rate_limited_total{class="restart",face="openrelay"} 1`,
			`gpugraph_rate_limited_total{class="ingest",face="runai"} 1`,
		} {
			if !strings.Contains(string(metrics), line+"\n") {
				t.Errorf("/metrics lacks %s", line)
			}
		}
	})
}
