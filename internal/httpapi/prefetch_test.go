package httpapi_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"gpugraph/bench/fleetgen"
	"gpugraph/internal/httpapi"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// Lists prefetch the levels their query selects, so each level is one
// statement even when the loaders' batch wait is too short to gather
// anything: the count does not depend on timing.
func TestListsPrefetchEachLevelInOneStatement(t *testing.T) {
	noWait := servertest.Options{LoaderWait: time.Nanosecond}
	cases := []struct {
		name, token, query string
		want               int64
	}{
		// key lookup + nodes + gpus + models + vms + vm gpus
		{"nodes", "fleet-reader", `{ nodes { name gpus { index model { name } } vms { id gpuIds gpus { address } } } }`, 6},
		// key lookup + count + page + vm gpus + models + nodes + node gpus + their models (again: another level)
		{"vms", "fleet-reader", `{ vms(limit: 500) { total vms { gpuModel { name } gpus { address } node { name gpus { model { name } } } } } }`, 8},
		// without total the page runs no count(*)
		{"vms without total", "fleet-reader", `{ vms(limit: 500) { next vms { id } } }`, 2},
		// key lookup + nodes + gpus: the free count is read off the GPUs' rows
		{"free gpus", "fleet-reader", `{ nodes { name freeGpuCount gpus { index } } }`, 3},
		{"free gpus alone", "fleet-reader", `{ nodes { freeGpuCount } }`, 3},
		// key lookup + nodes + gpus + their holders, whichever organization's
		{"gpu holders", "fleet-operator", `{ nodes { freeGpuCount gpus { holder { organizationId vmId } } } }`, 4},
		// a tenant's holders are read from nothing: no statement for them
		{"gpu holders for a tenant", "fleet-reader", `{ nodes { freeGpuCount gpus { holder { organizationId vmId } } } }`, 3},
		// a GPU's holder and its node walk back up: one statement a level
		{"gpu vm and node", "fleet-reader", `{ nodes { gpus { vm { id node { name } } node { name } } } }`, 6},
	}
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		for _, n := range []int{5, 50} {
			env := servertest.NewWithOptions(t, storetest.Open(t, st.Dialect), fleet(n), noWait, httpapi.Config{})
			for _, c := range cases {
				var r *servertest.Response
				got := env.Statements(func() { r = env.GraphQL(c.token, c.query, nil) })
				if len(r.Errors) > 0 {
					t.Fatalf("%s: %+v", c.name, r.Errors)
				}
				if got != c.want {
					t.Errorf("%s over %d nodes: %d statements, want %d", c.name, n, got, c.want)
				}
			}
		}
	})
}

// A page of pods prefetches its nodes, their GPUs and models, workloads and
// projects: one statement a level at every page size, with no batch wait.
func TestPodPagesPrefetch(t *testing.T) {
	noWait := servertest.Options{LoaderWait: time.Nanosecond}
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		b, err := json.Marshal(fleetgen.Generate(fleetgen.Options{Nodes: 60, Pods: 1200, Tenants: 1, Seed: 2}))
		if err != nil {
			t.Fatal(err)
		}
		env := servertest.NewWithOptions(t, st, string(b), noWait, httpapi.Config{})
		q := `query($limit: Int) { pods(limit: $limit) { pods { id node { name gpus { index model { name } } } workload { name project { name } } project { id } } } }`
		var counts []int64
		for _, limit := range []int{5, 50, 500} {
			var r *servertest.Response
			counts = append(counts, env.Statements(func() { r = env.GraphQL(fleetgen.Token(0), q, map[string]any{"limit": limit}) }))
			var got struct {
				Pods struct {
					Pods []struct {
						Node *struct {
							GPUs []struct{ Model struct{ Name string } }
						}
						Workload struct{ Project struct{ Name string } }
					}
				}
			}
			env.Decode(r, &got)
			if len(got.Pods.Pods) != limit || got.Pods.Pods[limit-1].Workload.Project.Name == "" {
				t.Fatalf("limit %d: %d pods", limit, len(got.Pods.Pods))
			}
		}
		// key lookup + page + nodes + gpus + models + workloads + projects
		for _, n := range counts {
			if n != 7 {
				t.Fatalf("statements at limits 5, 50, 500: %v, want 7 each", counts)
			}
		}
		// revisionPods is a list of pods too.
		var rev string
		storetest.Scan(t, st, &rev, "SELECT id FROM revisions ORDER BY id LIMIT 1")
		var r *servertest.Response
		n := env.Statements(func() {
			r = env.GraphQL(fleetgen.Token(0), `query($id: ID!) { revisionPods(revisionId: $id) { node { gpus { model { name } } } workload { name } } }`, map[string]any{"id": rev})
		})
		if len(r.Errors) > 0 || n != 7 { // key lookup + revision check + pods + nodes + gpus + models + workloads
			t.Fatalf("revisionPods: %d statements, %+v", n, r.Errors)
		}
	})
}

// A GraphQL page reads only the columns its selection needs; the pods it
// answers are the same as with every column.
func TestPodPagesReadSelectedColumns(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		b, err := json.Marshal(fleetgen.Generate(fleetgen.Options{Nodes: 10, Pods: 40, Tenants: 1, Seed: 2}))
		if err != nil {
			t.Fatal(err)
		}
		env := servertest.New(t, st, string(b))
		rec := storetest.CountStatements(t, st)
		var flat, full *servertest.Response
		stmts := rec.Record(func() {
			flat = env.GraphQL(fleetgen.Token(0), `{ pods(limit: 3) { pods { name ... on Pod { k8sPhase } node { name } } } }`, nil)
		})
		page := ""
		for _, s := range stmts {
			if q := strings.ReplaceAll(s.SQL, "`", `"`); strings.Contains(q, `FROM "pods"`) {
				page = q
			}
		}
		if !strings.HasPrefix(page, `SELECT "id","name","k8s_phase","node_name","cluster_id" FROM "pods"`) {
			t.Fatalf("page reads %s of %+v", page, stmts)
		}
		full = env.GraphQL(fleetgen.Token(0), `{ pods(limit: 3) { pods { name k8sPhase node { name } containers { name } workloadName } } }`, nil)
		var a, c struct {
			Pods struct {
				Pods []struct {
					Name, K8sPhase string
					Node           *struct{ Name string }
					Containers     []struct{ Name string }
					WorkloadName   *string
				}
			}
		}
		env.Decode(flat, &a)
		env.Decode(full, &c)
		for i := range a.Pods.Pods {
			x, y := a.Pods.Pods[i], c.Pods.Pods[i]
			if x.Name != y.Name || x.K8sPhase != y.K8sPhase || (x.Node == nil) != (y.Node == nil) || (x.Node != nil && x.Node.Name != y.Node.Name) {
				t.Fatalf("pod %d: %+v vs %+v", i, x, y)
			}
			if len(y.Containers) != 1 || y.WorkloadName == nil {
				t.Fatalf("full pod %d lacks columns: %+v", i, y)
			}
		}
	})
}

// A prefetch that fails fails the list, as a failed load fails its field:
// the error is the list's, not one per nested field.
func TestAFailedPrefetchFailsTheList(t *testing.T) {
	noWait := servertest.Options{LoaderWait: time.Nanosecond}
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.NewWithOptions(t, st, fleet(3), noWait, httpapi.Config{})
		storetest.Exec(t, st, "ALTER TABLE gpu_models RENAME TO gpu_models_gone")
		r := env.GraphQL("fleet-reader", `{ vms { vms { id gpuModel { name } } } }`, nil)
		if len(r.Errors) != 1 || len(r.Errors[0].Path) != 1 || r.Errors[0].Path[0] != "vms" || string(r.Data) != "null" {
			t.Fatalf("data %s, errors %+v", r.Data, r.Errors)
		}
		if strings.Contains(r.Errors[0].Message, "gpu_models") {
			t.Fatalf("the error names a table: %s", r.Errors[0].Message)
		}
	})
}
