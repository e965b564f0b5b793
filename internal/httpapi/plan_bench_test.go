package httpapi_test

import (
	"encoding/json"
	"net/http"
	"syscall"
	"testing"
	"time"

	"gpugraph/bench/fleetgen"
	"gpugraph/internal/httpapi"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// BenchmarkNestedPage times a page of 500 pods with their nodes, the
// nodes' GPUs and their models (about 45,000 fields) on SQLite, written by
// a plan and by gqlgen's executor, one request at a time (ns/op is the
// latency) and eight at once per core (ns/op is the inverse of the
// throughput); cpu-ms/op is the process's CPU per request (all goroutines,
// the server's included). It is the figure gqlgen.yml's exec.worker_limit
// (docs/architecture.md, "Plans") was measured with.
//
//	go test ./internal/httpapi -run '^$' -bench NestedPage -benchtime 20x
func BenchmarkNestedPage(b *testing.B) {
	st := storetest.Open(b, store.SQLite)
	fixture, err := json.Marshal(fleetgen.Generate(fleetgen.Options{Nodes: 60, Pods: 1200, Tenants: 1, Seed: 2}))
	if err != nil {
		b.Fatal(err)
	}
	planned := servertest.NewAsDeployed(b, st, string(fixture), httpapi.Config{})
	gqlgen := servertest.NewAsDeployed(b, st, "", httpapi.Config{DisablePlanner: true})
	body, _ := json.Marshal(map[string]any{"query": `{ pods(limit: 500) { total pods { id name k8sPhase createdAt nodeName
		node { name status gpus { index uuid health utilization model { name memoryGb } } } workload { name } } } }`})
	for _, c := range []struct {
		name string
		env  *servertest.Env
	}{{"plan", planned}, {"gqlgen", gqlgen}} {
		b.Run(c.name, func(b *testing.B) {
			if status, got := c.env.Do(http.MethodPost, "/graphql", fleetgen.Token(0), body, nil); status != http.StatusOK || len(got) < 100_000 {
				b.Fatalf("%d, %d bytes", status, len(got))
			}
			before := cpu()
			for b.Loop() {
				c.env.Do(http.MethodPost, "/graphql", fleetgen.Token(0), body, nil)
			}
			b.ReportMetric(float64(cpu()-before)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
		})
		// Eight requests at once per core: what a busy server sees.
		b.Run(c.name+"/parallel", func(b *testing.B) {
			b.SetParallelism(8)
			before := cpu()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					c.env.Do(http.MethodPost, "/graphql", fleetgen.Token(0), body, nil)
				}
			})
			b.ReportMetric(float64(cpu()-before)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
		})
	}
}

// cpu is the process's CPU time so far, user and system.
func cpu() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
