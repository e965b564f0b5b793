package clustersync_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"testing"
	"time"

	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

var syncBenchPods = flag.Int("sync-pods", 150000, "pods of BenchmarkClusterSync's cluster (over sync-pods/30 nodes)")

// BenchmarkClusterSync: a cluster's initial sync (a snapshot in parts of
// 5,000 pods), then deltas of 200 pod phase changes (one second's worth at
// 200/s), each read back through the Pods API: ns/op is one delta's POST
// to the answer showing it. go test ./internal/httpapi/ -run X -bench ClusterSync -sync-pods 150000
func BenchmarkClusterSync(b *testing.B) {
	for _, d := range storetest.Engines() {
		b.Run(string(d), func(b *testing.B) {
			st := storetest.Open(b, d)
			env := servertest.New(b, st, clusterFixture)
			cred := enrollClusterB(b, env)
			path := "/api/v1/clusters/" + clusterA + "/sync"
			n := *syncBenchPods
			start := time.Now()
			seq := int64(0)
			for from := 0; from < n; from += 5000 {
				pods := make([]map[string]any, 0, 5000)
				for i := from; i < min(from+5000, n); i++ {
					p := syncPod(clusterA, i, "Pending")
					p["nodeName"] = fmt.Sprintf("node-%d", i%max(n/30, 1))
					pods = append(pods, p)
				}
				seq++
				batch := syncBatch(seq, "snapshot", pods...)
				batch["more"] = from+5000 < n
				mustSync(b, env, path, cred, batch)
			}
			initial := time.Since(start)
			b.ResetTimer()
			for k := range b.N {
				pods := make([]map[string]any, 200)
				for j := range pods {
					p := syncPod(clusterA, (k*200+j)%n, []string{"Running", "Succeeded"}[k%2])
					p["nodeName"] = fmt.Sprintf("node-%d", ((k*200+j)%n)%max(n/30, 1))
					pods[j] = p
				}
				seq++
				mustSync(b, env, path, cred, syncBatch(seq, "delta", pods...))
				status, body := env.Do("GET", "/api/v1/workloads/pods/"+"count?filterBy=k8sPhase==Running", "acme-reader", nil, nil)
				if status != 200 {
					b.Fatalf("count: %d %s", status, body)
				}
			}
			b.ReportMetric(initial.Seconds(), "initial-sync-s")
		})
	}
}

func enrollClusterB(b *testing.B, env *servertest.Env) string {
	status, body := env.Do("POST", "/v1/admin/clusters/enroll", "ops-admin", []byte(`{"clusterId": "`+clusterA+`", "tenantId": 9301}`), nil)
	if status != 201 {
		b.Fatalf("enroll: %d %s", status, body)
	}
	var e struct{ Credential string }
	decodeInto(b, body, &e)
	return e.Credential
}

func mustSync(b *testing.B, env *servertest.Env, path, cred string, batch map[string]any) {
	raw := encodeJSON(b, batch)
	if status, body := env.Do("POST", path, cred, raw, nil); status != 200 {
		b.Fatalf("sync: %d %s", status, body)
	}
}

var _ store.Dialect

func decodeInto(b *testing.B, raw []byte, v any) {
	if err := json.Unmarshal(raw, v); err != nil {
		b.Fatal(err)
	}
}

func encodeJSON(b *testing.B, v any) []byte {
	raw, err := json.Marshal(v)
	if err != nil {
		b.Fatal(err)
	}
	return raw
}
