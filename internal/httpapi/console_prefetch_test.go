package httpapi_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"gpugraph/bench/fleetgen"
	"gpugraph/internal/httpapi"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// The console's lists prefetch every level they select, through a
// connection's edges.node as through its nodes: one statement a level and
// loader, the same at every page size, with no batch wait to lean on.
func TestConsoleListsPrefetchEachLevelInOneStatement(t *testing.T) {
	noWait := servertest.Options{LoaderWait: time.Nanosecond}
	cases := []struct {
		name, token, query string
		want               int64
	}{
		// key lookup + page + models + holders + nodes, then the holders' nodes again: a level deeper
		{"gpus", "fleet-reader", `query($n: Int) { gpus(first: $n) { edges { cursor node { model { name } vm { id node { name } } node { name } } } } }`, 6},
		// key lookup + count + page + gpus + vms + models
		{"nodesConnection", "fleet-000", `query($n: Int) { nodesConnection(first: $n) { totalCount edges { node { gpus { model { name } } vms { id } } } pageInfo { endCursor } } }`, 6},
		// key lookup + count + page + gpus + vms + models: nodeList is nodes' offset page
		{"nodeList", "fleet-000", `query($n: Int) { nodeList(limit: $n) { total nodes { gpus { model { name } } vms { id } } } }`, 6},
		// key lookup + page + vm gpus + models + nodes + node gpus (nodes and edges select alike: one read)
		{"vmsConnection", "fleet-000", `query($n: Int) { vmsConnection(first: $n) { nodes { id gpuModel { name } } edges { node { gpus { address } node { name gpus { index } } } } } }`, 6},
		// key lookup + page + nodes + gpus + workloads + projects
		{"podsConnection", "fleet-000", `query($n: Int) { podsConnection(first: $n) { edges { node { node { name gpus { index } } workload { name project { name } } project { id } } } } }`, 6},
		// key lookup + page + nodes + workloads + projects: a typed filter costs nothing more
		{"pods where", "fleet-000", `query($n: Int) { pods(limit: $n, where: {k8sPhase: {ne: "Pending"}, createdAt: {gte: "2000-01-01T00:00:00Z"}}) { pods { node { name } workload { project { name } } } } }`, 5},
		// key lookup + workloads + projects
		{"workloads", "fleet-000", `query($n: Int) { workloads(limit: $n) { name project { name } } }`, 3},
	}
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		b, err := json.Marshal(fleetgen.Generate(fleetgen.Options{Nodes: 60, Pods: 600, Tenants: 1, Seed: 2, VMsPerNode: 2, VMGPUs: 2}))
		if err != nil {
			t.Fatal(err)
		}
		env := servertest.NewWithOptions(t, st, string(b), noWait, httpapi.Config{})
		// fleet's VMs run and hold GPUs, so a GPU's vm reads a level.
		held := servertest.NewWithOptions(t, storetest.Open(t, st.Dialect), fleet(60), noWait, httpapi.Config{})
		for _, c := range cases {
			env := env
			if c.token == "fleet-reader" {
				env = held
			}
			var counts []int64
			for _, n := range []int{5, 50, 55} {
				var r *servertest.Response
				counts = append(counts, env.Statements(func() { r = env.GraphQL(c.token, c.query, map[string]any{"n": n}) }))
				if len(r.Errors) > 0 {
					t.Fatalf("%s: %+v", c.name, r.Errors)
				}
				if len(r.Data) < 100 {
					t.Fatalf("%s: %s", c.name, r.Data)
				}
			}
			if fmt.Sprint(counts) != fmt.Sprint([]int64{c.want, c.want, c.want}) {
				t.Errorf("%s: statements at page sizes 5, 50, 55: %v, want %d each", c.name, counts, c.want)
			}
		}
	})
}
