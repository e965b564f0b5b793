package httpapi_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/httpapi"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/lib/ratelimit"
	"gpugraph/internal/lib/replicas"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// Issue 23 (findings 5 and 7): the documented rate limits hold for the
// whole deployment, not per replica. Two replicas over one database, each
// with its own store, heartbeat and buckets, behind a load balancer that
// alternates between them: one key gets the configured burst in all (100
// accepted, then 429 on both), for every class and for the operations of a
// stream; when one replica leaves, the other holds the whole limit from its
// next beat.
func TestRateLimitAcrossReplicas(t *testing.T) {
	for _, d := range storetest.Engines() {
		t.Run(string(d), func(t *testing.T) {
			st := storetest.Replicas(t, d, 2)
			limits := map[ratelimit.Class]ratelimit.Limit{ratelimit.API: slow(100), ratelimit.Restart: slow(5), ratelimit.Ingest: slow(4)}
			beats := []*replicas.Heartbeat{replicas.New(st[0], time.Hour), replicas.New(st[1], time.Hour)}
			for _, i := range []int{0, 1, 0} { // A, then B (which sees A), then A sees B
				if err := beats[i].Beat(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			envs := make([]*servertest.Env, 2)
			for i := range envs {
				if n, _ := beats[i].Live(); n != 2 {
					t.Fatalf("replica %d counts %d live, want 2", i, n)
				}
				envs[i] = servertest.NewWithConfig(t, st[i], servertest.Base, httpapi.Config{RateLimits: limits, Replicas: beats[i]})
				if got := metricLine(t, envs[i], "gpugraph_replicas "); got != "gpugraph_replicas 2" {
					t.Errorf("replica %d: %q, want gpugraph_replicas 2", i, got)
				}
			}

			// The API class: 200 requests alternating between the replicas.
			accepted := [2]int{}
			for i := 0; i < 200; i++ {
				resp := envs[i%2].Request("GET", "/api/v1/workloads/pods/count", "globex-operator", nil, nil)
				body := readAll(t, resp)
				switch {
				case resp.StatusCode == 200:
					if i >= 100 {
						t.Fatalf("request %d (replica %d) accepted past the burst of 100 in all", i+1, i%2)
					}
					accepted[i%2]++
				case resp.StatusCode == 429 && retryNear2000(resp.Header.Get("Retry-After"), body):
					// Each replica refills its share, 0.0005 a second: one
					// token there in 2000 s, less the seconds the test has
					// run on a loaded host.
					if i < 100 {
						t.Fatalf("request %d (replica %d) refused within the burst: %s", i+1, i%2, body)
					}
				default:
					t.Fatalf("request %d (replica %d): %d Retry-After %q %s", i+1, i%2, resp.StatusCode, resp.Header.Get("Retry-After"), body)
				}
			}
			if accepted != [2]int{50, 50} {
				t.Errorf("accepted %v by replica, want 50 each, 100 in all", accepted)
			}

			// Restarts (a burst of 5: 3 on one replica, 2 on the other, by
			// their ids' order) and ingestion (4: 2 each).
			for _, tc := range []struct {
				class        ratelimit.Class
				method, path string
				key, body    string
				want         int
			}{
				{ratelimit.Restart, "POST", "/v1/vms/vm-acme-2/restart", "acme-operator", "", 5},
				{ratelimit.Ingest, "POST", "/api/v1/metrics/samples", "acme-metrics", `{"podMetrics": []}`, 4},
			} {
				got := 0
				for i := 0; i < 2*tc.want; i++ {
					var body []byte
					if tc.body != "" {
						body = []byte(tc.body)
					}
					if s, b := envs[i%2].Do(tc.method, tc.path, tc.key, body, nil); s != 429 {
						got++
					} else if !strings.Contains(string(b), "rate limit allows") {
						t.Fatalf("%s: %d %s", tc.class, s, b)
					}
				}
				if got != tc.want {
					t.Errorf("%s: %d of %d accepted across the replicas, want the burst of %d", tc.class, got, 2*tc.want, tc.want)
				}
			}

			// A stream's operations spend the share of the replica holding
			// the stream: 50 of 100 over one WebSocket to replica A.
			s := initWS(t, envs[0], "acme-reader")
			const n = 100
			for i := range n {
				s.operate(fmt.Sprint(i), `{ node(id: "n1") { name } }`)
			}
			answered := 0
			for id, r := range s.results(n) {
				switch {
				case len(r.Errors) == 0:
					answered++
				case r.code() != "RATE_LIMITED":
					t.Fatalf("operation %s: %s %+v", id, r.Data, r.Errors)
				}
			}
			if answered != 50 {
				t.Errorf("%d of %d WebSocket operations answered on one of two replicas, want its share of the burst, 50", answered, n)
			}

			// B shuts down cleanly; at A's next beat A holds the whole
			// limit: the bucket it emptied refills at 0.001 a second.
			if err := beats[1].Leave(context.Background()); err != nil {
				t.Fatal(err)
			}
			if err := beats[0].Beat(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := metricLine(t, envs[0], "gpugraph_replicas "); got != "gpugraph_replicas 1" {
				t.Errorf("A after B left: %q, want gpugraph_replicas 1", got)
			}
			resp := envs[0].Request("GET", "/api/v1/workloads/pods/count", "globex-operator", nil, nil)
			readAll(t, resp)
			if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "1000" {
				t.Errorf("A alone, its bucket empty: %d Retry-After %q, want 429, 1000", resp.StatusCode, resp.Header.Get("Retry-After"))
			}
			// A key not seen before gets the whole burst of 100 on A alone.
			got := 0
			for i := 0; i < 101; i++ {
				if s, _ := envs[0].Do("GET", "/api/v1/workloads/pods/count", "acme-workloads", nil, nil); s == 200 {
					got++
				}
			}
			if got != 100 {
				t.Errorf("a fresh key on the replica left alone: %d of 101 accepted, want 100", got)
			}
		})
	}
}

// One replica (one process on its database, heartbeat and all) holds the
// whole limit: 100 accepted, then 429.
func TestRateLimitOneReplica(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		beat := replicas.New(st, time.Hour)
		if err := beat.Beat(context.Background()); err != nil {
			t.Fatal(err)
		}
		env := servertest.NewWithConfig(t, st, servertest.Base, httpapi.Config{
			RateLimits: map[ratelimit.Class]ratelimit.Limit{ratelimit.API: slow(100)}, Replicas: beat,
		})
		for i := 0; i < 100; i++ {
			if s, b := env.Do("GET", "/api/v1/workloads/pods/count", "globex-operator", nil, nil); s != 200 {
				t.Fatalf("request %d of the burst: %d %s", i+1, s, b)
			}
		}
		resp := env.Request("GET", "/api/v1/workloads/pods/count", "globex-operator", nil, nil)
		readAll(t, resp)
		if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "1000" {
			t.Errorf("101st: %d Retry-After %q, want 429, 1000", resp.StatusCode, resp.Header.Get("Retry-After"))
		}
		if got := metricLine(t, env, "gpugraph_replicas "); got != "gpugraph_replicas 1" {
			t.Errorf("%q, want gpugraph_replicas 1", got)
		}
	})
}

// metricLine answers the line of env's /metrics that starts with prefix.
func metricLine(t *testing.T, env *servertest.Env, prefix string) string {
	t.Helper()
	_, b := env.Do("GET", "/metrics", "", nil, nil)
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, prefix) {
			return line
		}
	}
	return ""
}

// retryNear2000 says a refusal's Retry-After and message both name the
// same wait of 1990 to 2000 s.
func retryNear2000(header, body string) bool {
	n, err := strconv.Atoi(header)
	return err == nil && n >= 1990 && n <= 2000 &&
		strings.Contains(body, fmt.Sprintf(`"message":"this credential sent more requests than its rate limit allows; retry in %d s"`, n))
}
