package httpapi_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"gpugraph/bench/fleetgen"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// Typed filters compile to the filterBy filters: over a table of filters,
// where and filterBy answer the same pods and the same count, on both
// engines, and the cursor page answers what the offset page does.
func TestTypedFiltersAnswerAsFilterBy(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		b, err := json.Marshal(fleetgen.Generate(fleetgen.Options{Nodes: 12, Pods: 240, Tenants: 1, Seed: 5}))
		if err != nil {
			t.Fatal(err)
		}
		env := servertest.New(t, st, string(b))
		tok := fleetgen.Token(0)
		// Values taken from the data: a pod a third of the way in by
		// creation, its workload (in upper case: UUIDs compare folded) and
		// a completed pod's completion time.
		var all struct {
			Pods struct {
				Pods []struct {
					ID, CreatedAt, WorkloadID string
					CompletedAt               *string
				}
			}
		}
		env.Decode(env.GraphQL(tok, `{ pods(limit: 500) { pods { id createdAt workloadId completedAt } } }`, nil), &all)
		pivot := all.Pods.Pods[80]
		var done string
		for _, p := range all.Pods.Pods {
			if p.CompletedAt != nil {
				done = *p.CompletedAt
			}
		}
		if done == "" {
			t.Fatal("no completed pod in the data")
		}
		wl := strings.ToUpper(pivot.WorkloadID)
		cases := []struct {
			filterBy []string
			where    map[string]any
			matches  bool // whether the filter matches some pods but not all
		}{
			{[]string{"nodeName==gpu-node-00003"}, map[string]any{"nodeName": map[string]any{"eq": "gpu-node-00003"}}, true},
			{[]string{"nodeName!=gpu-node-00003"}, map[string]any{"nodeName": map[string]any{"ne": "gpu-node-00003"}}, true},
			{[]string{"nodeName<=gpu-node-00004"}, map[string]any{"nodeName": map[string]any{"lte": "gpu-node-00004"}}, true},
			{[]string{"nodeName>=gpu-node-00009"}, map[string]any{"nodeName": map[string]any{"gte": "gpu-node-00009"}}, true},
			{[]string{"name=@-1"}, map[string]any{"name": map[string]any{"contains": "-1"}}, true},
			{[]string{"name!@-1"}, map[string]any{"name": map[string]any{"notContains": "-1"}}, true},
			{[]string{"name=^job-0-00002"}, map[string]any{"name": map[string]any{"startsWith": "job-0-00002"}}, true},
			{[]string{"name=$-3"}, map[string]any{"name": map[string]any{"endsWith": "-3"}}, true},
			{[]string{"k8sPhase==Running"}, map[string]any{"k8sPhase": map[string]any{"eq": "Running"}}, true},
			{[]string{"currentNodepool==pool-h100-80gb"}, map[string]any{"currentNodePool": map[string]any{"eq": "pool-h100-80gb"}}, true},
			{[]string{"priorityClassName==inference"}, map[string]any{"priorityClassName": map[string]any{"eq": "inference"}}, true},
			{[]string{"workloadId==" + wl}, map[string]any{"workloadId": map[string]any{"eq": wl}}, true},
			{[]string{"createdAt>=" + pivot.CreatedAt}, map[string]any{"createdAt": map[string]any{"gte": pivot.CreatedAt}}, true},
			{[]string{"createdAt<=" + pivot.CreatedAt}, map[string]any{"createdAt": map[string]any{"lte": pivot.CreatedAt}}, true},
			{[]string{"createdAt==" + pivot.CreatedAt}, map[string]any{"createdAt": map[string]any{"eq": pivot.CreatedAt}}, true},
			{[]string{"completedAt!=" + done}, map[string]any{"completedAt": map[string]any{"ne": done}}, true},
			{[]string{"completedAt<=" + done}, map[string]any{"completedAt": map[string]any{"lte": done}}, true},
			// Several operators on one field, several fields: all must hold.
			{[]string{"createdAt>=" + all.Pods.Pods[20].CreatedAt, "createdAt<=" + pivot.CreatedAt}, map[string]any{"createdAt": map[string]any{"gte": all.Pods.Pods[20].CreatedAt, "lte": pivot.CreatedAt}}, true},
			{[]string{"k8sPhase==Running,nodeName=^gpu-node-0000"}, map[string]any{"k8sPhase": map[string]any{"eq": "Running"}, "nodeName": map[string]any{"startsWith": "gpu-node-0000"}}, true},
			// A null field or operator filters nothing.
			{nil, map[string]any{"nodeName": nil, "name": map[string]any{"eq": nil}}, false},
		}
		ids := func(r *servertest.Response, field string) []string {
			var got map[string]struct{ Pods, Nodes []struct{ ID string } }
			env.Decode(r, &got)
			var out []string
			for _, p := range append(got[field].Pods, got[field].Nodes...) {
				out = append(out, p.ID)
			}
			return out
		}
		const list = `query($f: [String!], $w: PodFilter) { pods(filterBy: $f, where: $w, limit: 500, sortBy: NAME) { pods { id } } }`
		const count = `query($f: [String!], $w: PodFilter) { podsCount(filterBy: $f, where: $w) }`
		const conn = `query($f: [String!], $w: PodFilter) { podsConnection(filterBy: $f, where: $w, first: 500, sortBy: NAME) { nodes { id } } }`
		for _, c := range cases {
			byText := ids(env.GraphQL(tok, list, map[string]any{"f": c.filterBy}), "pods")
			byType := ids(env.GraphQL(tok, list, map[string]any{"w": c.where}), "pods")
			if !slices.Equal(byText, byType) {
				t.Errorf("%v: filterBy %d pods, where %d pods", c.filterBy, len(byText), len(byType))
			}
			if c.matches && (len(byText) == 0 || len(byText) == 240) {
				t.Errorf("%v matches %d of 240 pods: the case tests nothing", c.filterBy, len(byText))
			}
			if got := ids(env.GraphQL(tok, conn, map[string]any{"w": c.where}), "podsConnection"); !slices.Equal(got, byText) {
				t.Errorf("%v: podsConnection where answers %d pods, pods %d", c.filterBy, len(got), len(byText))
			}
			var n1, n2 struct{ PodsCount int }
			env.Decode(env.GraphQL(tok, count, map[string]any{"f": c.filterBy}), &n1)
			env.Decode(env.GraphQL(tok, count, map[string]any{"w": c.where}), &n2)
			if n1.PodsCount != n2.PodsCount || n1.PodsCount != len(byText) {
				t.Errorf("%v: podsCount filterBy %d, where %d, listed %d", c.filterBy, n1.PodsCount, n2.PodsCount, len(byText))
			}
		}
		// Both spellings in one request AND together.
		both := ids(env.GraphQL(tok, list, map[string]any{"f": []string{"k8sPhase==Running"}, "w": map[string]any{"nodeName": map[string]any{"startsWith": "gpu-node-0000"}}}), "pods")
		joined := ids(env.GraphQL(tok, list, map[string]any{"f": []string{"k8sPhase==Running,nodeName=^gpu-node-0000"}}), "pods")
		if !slices.Equal(both, joined) || len(both) == 0 {
			t.Errorf("where and filterBy together: %d pods, joined filterBy %d", len(both), len(joined))
		}
	})
}

// A bad typed filter is a 400 whose message, or path where GraphQL's own
// input checks answer it, names the field and operator.
func TestTypedFilterErrorsNameTheField(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, servertest.Base)
		cases := []struct{ where, message, path string }{
			{`{nodeName: {eq: ""}}`, "where.nodeName.eq: empty value", "[pods]"},
			{`{createdAt: {gte: "2024-01-01T00:00:00"}}`, `"2024-01-01T00:00:00" is not an ISO 8601 instant with a zone (e.g. 2023-06-06T12:09:18.211Z)`, "[pods where createdAt gte]"},
			{`{createdAt: {gte: "2024-01-01T00:00:00+99:00"}}`, `"2024-01-01T00:00:00+99:00" is not an ISO 8601 instant with a zone (e.g. 2023-06-06T12:09:18.211Z)`, "[pods where createdAt gte]"},
			{`{size: {eq: "1"}}`, `Field "size" is not defined by type "PodFilter".`, "[]"},
			{`{nodeName: {lt: "1"}}`, `Field "lt" is not defined by type "StringFilter". Did you mean "lte"?`, "[]"},
			{`{name: {contains: "a\u0000b"}}`, "argument where of pods contains a NUL character", "[]"},
		}
		for _, c := range cases {
			r := env.GraphQL("acme-workloads", `{ pods(where: `+c.where+`) { pods { id } } }`, nil)
			if len(r.Errors) != 1 || r.Code() != "BAD_REQUEST" || r.Errors[0].Message != c.message || fmt.Sprint(r.Errors[0].Path) != c.path {
				t.Errorf("%s: %s %+v, want BAD_REQUEST %q at %s", c.where, r.Data, r.Errors, c.message, c.path)
			}
		}
	})
}
