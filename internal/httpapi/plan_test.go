package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"

	"gpugraph/bench/fleetgen"
	"gpugraph/graph"
	"gpugraph/internal/httpapi"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// derived are the fields a plan leaves to gqlgen: their resolvers derive a
// value (or take arguments) rather than answer a loader's rows.
var derived = map[string]bool{"VM.gpuIds": true, "VM.gpuManufacturer": true, "VM.gpuModelName": true, "VM.queuePosition": true, "VM.costSoFar": true, "VM.console": true, "Gpu.memoryUsedBytes": true, "Node.freeGpuCount": true}

// everything selects every field of typ that takes no argument, objects
// depth levels down, the derived fields left out.
func everything(schema *ast.Schema, typ string, depth int) string {
	def := schema.Types[typ]
	var parts []string
	for _, f := range def.Fields {
		if len(f.Arguments) > 0 || derived[typ+"."+f.Name] || strings.HasPrefix(f.Name, "__") {
			continue
		}
		switch schema.Types[f.Type.Name()].Kind {
		case ast.Object:
			if depth > 0 {
				parts = append(parts, f.Name+" "+everything(schema, f.Type.Name(), depth-1))
			}
		default:
			parts = append(parts, f.Name)
		}
	}
	return "{ __typename " + strings.Join(parts, " ") + " }"
}

// Every field a plan can write is written byte for byte as gqlgen writes
// it: each planned root selecting every field three levels down, answered
// by a server with plans and by one without, over one database, and
// compared in the planned server (servertest.CheckPlans) as well.
func TestPlansAnswerAsGqlgen(t *testing.T) {
	schema := graph.NewExecutableSchema(graph.Config{}).Schema()
	pod, vm, node := everything(schema, "Pod", 3), everything(schema, "VM", 3), everything(schema, "Node", 3)
	queries := []struct {
		token, query string
		roots        int64 // root fields planned
	}{
		{"fleet-000", `{ pods(limit: 40) { total next pods ` + pod + ` } }`, 1},
		{"fleet-000", `{ vms(limit: 40) { total next vms ` + vm + ` } }`, 1},
		{"fleet-000", `{ nodes ` + node + ` }`, 1},
		{"fleet-000", `{ nodeList(limit: 7) { total next nodes ` + node + ` } }`, 1},
		{"fleet-reader", `{ vms { vms ` + vm + ` } nodes ` + node + ` }`, 2},
		{"fleet-000", `{ podsConnection(first: 30) ` + everything(schema, "PodConnection", 4) + ` }`, 1},
		{"fleet-000", `{ vmsConnection(first: 30) ` + everything(schema, "VmConnection", 3) + ` }`, 1},
		{"fleet-000", `{ nodesConnection(first: 5) ` + everything(schema, "NodeConnection", 3) + ` }`, 1},
		{"fleet-reader", `{ gpus(first: 40) ` + everything(schema, "GpuConnection", 3) + ` }`, 1},
		{"fleet-000", `{ workloads(limit: 20) ` + everything(schema, "Workload", 2) + ` projects ` + everything(schema, "Project", 2) + ` gpuModels ` + everything(schema, "GpuModel", 2) + ` }`, 3},
		// Aliases, fragments, one field selected twice, a directive read
		// from a variable.
		{"fleet-000", `query($no: Boolean!) { p: pods(limit: 30, sortBy: NAME, sortOrder: DESC) { pods { ...F id: name n2: node { name } node { status gpus { ... on Gpu { idx: index } } } } } }
			fragment F on Pod { name node { gpus { model { name } } } workload @skip(if: $no) { name } }`, 1},
	}
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		b, err := json.Marshal(fleetgen.Generate(fleetgen.Options{Nodes: 20, Pods: 200, Tenants: 1, Seed: 3, VMsPerNode: 2, VMGPUs: 2}))
		if err != nil {
			t.Fatal(err)
		}
		// Every field three levels down costs more than the default budget.
		on := httpapi.Config{ComplexityLimit: 1 << 30, AliasLimit: 1 << 20}
		off := on
		off.DisablePlanner = true
		planned := servertest.NewWithConfig(t, st, string(b), on)
		plain := servertest.NewWithConfig(t, st, "", off)
		heldDB := storetest.Open(t, st.Dialect)
		heldPlanned := servertest.NewWithConfig(t, heldDB, fleet(12), on)
		heldPlain := servertest.NewWithConfig(t, heldDB, "", off)
		for i, q := range queries {
			a, b := planned, plain
			if q.token == "fleet-reader" {
				a, b = heldPlanned, heldPlain
			}
			before := a.PlansChecked()
			vars := map[string]any{"no": i%2 == 0}
			got, want := rawGraphQL(t, a, q.token, q.query, vars), rawGraphQL(t, b, q.token, q.query, vars)
			if !bytes.Equal(got, want) {
				t.Errorf("query %d: planned\n%s\nwhere gqlgen answers\n%s", i, clipped(got), clipped(want))
			}
			if bytes.Contains(got, []byte(`"errors"`)) || len(got) < 200 {
				t.Errorf("query %d: %s", i, clipped(got))
			}
			if n := a.PlansChecked() - before; n != q.roots {
				t.Errorf("query %d: %d root fields planned, want %d", i, n, q.roots)
			}
		}
	})
}

// A selection with a field no plan reads is gqlgen's, whole: the same
// answer, no plan made.
func TestPlanFallsBackPerRootField(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, fleet(4))
		before := env.PlansChecked()
		r := env.GraphQL("fleet-reader", `{ derived: vms { vms { id gpuIds gpuModelName } } planned: vms { vms { id gpus { id } } } }`, nil)
		if len(r.Errors) > 0 {
			t.Fatal(r.Errors)
		}
		var got struct {
			Derived, Planned struct {
				Vms []struct {
					ID     string
					GPUIDs []string
					GPUs   []struct{ ID string }
				}
			}
		}
		env.Decode(r, &got)
		if n := env.PlansChecked() - before; n != 1 {
			t.Fatalf("%d root fields planned, want 1 (planned, not derived)", n)
		}
		if len(got.Derived.Vms) != 4 || len(got.Planned.Vms) != 4 {
			t.Fatalf("answer %s", r.Data)
		}
		for i, v := range got.Derived.Vms {
			var ids []string
			for _, g := range got.Planned.Vms[i].GPUs {
				ids = append(ids, g.ID)
			}
			if len(ids) == 0 || !slices.Equal(v.GPUIDs, ids) {
				t.Errorf("vm %s: gpuIds %v, gpus %v", v.ID, v.GPUIDs, ids)
			}
		}
	})
}

// rawGraphQL is the body of a GraphQL answer, as sent.
func rawGraphQL(t *testing.T, e *servertest.Env, token, query string, vars map[string]any) []byte {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	status, b := e.Do(http.MethodPost, "/graphql", token, body, nil)
	if status != http.StatusOK {
		t.Fatalf("%d %s", status, b)
	}
	return b
}

func clipped(b []byte) string {
	if len(b) > 3000 {
		return fmt.Sprintf("%s… (%d bytes)", b[:3000], len(b))
	}
	return string(b)
}

// A query's loaders read the node and GPU columns its selection answers
// from, the keys always: nothing more.
func TestLoadersReadSelectedColumns(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, fleet(3))
		rec := storetest.CountStatements(t, st)
		var r *servertest.Response
		stmts := rec.Record(func() {
			r = env.GraphQL("fleet-reader", `{ vms { vms { node { status gpus { address ...G } } } } } fragment G on Gpu { model { name } }`, nil)
		})
		if len(r.Errors) > 0 || !strings.Contains(string(r.Data), `"address":"0000:10:00.0"`) || !strings.Contains(string(r.Data), `"status":"ONLINE"`) {
			t.Fatalf("%+v %s", r.Errors, r.Data)
		}
		want := map[string]string{
			"FROM nodes": "SELECT id, status FROM nodes",
			"FROM gpus":  "SELECT node_id, address, model_id FROM gpus",
		}
		for _, s := range stmts {
			for from, prefix := range want {
				if strings.Contains(s.SQL, from) {
					if !strings.HasPrefix(s.SQL, prefix) {
						t.Errorf("read %s, want %s …", s.SQL, prefix)
					}
					delete(want, from)
				}
			}
		}
		if len(want) > 0 {
			t.Errorf("no read of %v in %+v", want, stmts)
		}
	})
}

// As deployed (no test comparing every answer), each cached plan's first
// answer is compared with gqlgen's all the same, once, and counted in
// /metrics: two documents, three requests, two checks, both the same.
func TestPlansCheckThemselvesOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.NewAsDeployed(t, st, fleet(3), httpapi.Config{})
		for _, q := range []string{`{ vms { vms { id node { name } } } }`, `{ vms { vms { id node { name } } } }`, `{ nodes { id gpus { index model { name } } } }`} {
			if r := env.GraphQL("fleet-reader", q, nil); len(r.Errors) > 0 {
				t.Fatal(r.Errors)
			}
		}
		_, page := env.Do(http.MethodGet, "/metrics", "", nil, nil)
		for _, want := range []string{
			`gpugraph_graphql_plan_checks_total{result="same"} 2`,
			`gpugraph_graphql_plan_checks_total{result="diverged"} 0`,
		} {
			if !strings.Contains(string(page), want+"\n") {
				t.Errorf("/metrics lacks %s:\n%s", want, grepLines(string(page), "plan_checks"))
			}
		}
	})
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
