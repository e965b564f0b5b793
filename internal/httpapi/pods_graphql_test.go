package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// podFields selects every field of the REST pod object.
const podFields = `name priorityClassName id workloadId revisionId clusterId projectId nodeName
	createdAt completedAt containers { name image startedAt } currentNodePool requestedNodePools
	requestedResources { gpuRequestType gpu { limit request } gpuMemory { limit request }
		cpu { limit request } cpuMemory { limit request } extendedResources { resource quantity exclude } }
	allocatedResources { gpu gpuMemory cpu cpuMemory extendedResources { resource quantity exclude } }
	tolerations { key operator value effect tolerationSeconds } k8sPhase ip task
	nodeAffinity {
		required { nodeSelectorTerms { matchExpressions { key operator values } } }
		preferred { nodeSelectorTerms { weight preference { matchExpressions { key operator values } } } } }
	tenantId k8sPhaseUpdatedAt updatedAt deletedAt projectName workloadName`

// asREST writes a GraphQL pod as the REST face does where the Run:ai
// schema refuses null: an unknown list is [], an unknown nodeAffinity has
// null halves, and a toleration leaves out its unknown strings.
func asREST(p map[string]any) map[string]any {
	for _, k := range []string{"requestedNodePools", "tolerations"} {
		if p[k] == nil {
			p[k] = []any{}
		}
	}
	if p["nodeAffinity"] == nil {
		p["nodeAffinity"] = map[string]any{"required": nil, "preferred": nil}
	}
	for _, tol := range p["tolerations"].([]any) {
		m := tol.(map[string]any)
		for _, k := range []string{"key", "operator", "value", "effect"} {
			if m[k] == nil {
				delete(m, k)
			}
		}
	}
	return p
}

// GraphQL and REST answer the same pods, field for field, for the same
// arguments; total is REST's count.
func TestPodsGraphQLMatchesREST(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, podsFixture(t))
		for _, tc := range []struct {
			args, rest, count string
		}{
			{``, ``, ``},
			{`(sortBy: NAME, sortOrder: DESC, limit: 3, offset: 2)`, `?sortBy=name&sortOrder=desc&limit=3&offset=2`, ``},
			{`(sortBy: CURRENT_NODEPOOL, limit: 2, offset: 4)`, `?sortBy=currentNodepool&limit=2&offset=4`, ``},
			{`(sortBy: COMPLETED_AT, sortOrder: ASC)`, `?sortBy=completedAt&sortOrder=asc`, ``},
			{`(filterBy: ["nodeName!=gpu-node-1"], search: "É")`, `?filterBy=nodeName!%3Dgpu-node-1&search=%C3%89`, `?filterBy=nodeName!%3Dgpu-node-1&search=%C3%89`},
			{`(filterBy: ["nodeName==gpu-node-1,k8sPhase==Running", "name=^alpha"])`, `?filterBy=nodeName%3D%3Dgpu-node-1,k8sPhase%3D%3DRunning&filterBy=name%3D%5Ealpha`, `?filterBy=nodeName%3D%3Dgpu-node-1,k8sPhase%3D%3DRunning&filterBy=name%3D%5Ealpha`},
			{`(deleted: true, sortBy: DELETED_AT)`, `?deleted=true&sortBy=deletedAt`, `?deleted=true`},
			{`(completed: false)`, `?completed=false`, `?completed=false`},
			{`(completed: null, deleted: null)`, `?completed=all`, `?completed=all`},
			{`(search: "vision", limit: 1)`, `?search=vision&limit=1`, `?search=vision`},
		} {
			r := env.GraphQL("acme-workloads", `{ pods`+tc.args+` { next total pods { `+podFields+` } } }`, nil)
			var got struct {
				Pods struct {
					Next  *int
					Total int
					Pods  []map[string]any
				}
			}
			env.Decode(r, &got)
			status, body := servertest.PodsGET(t, env, "acme-workloads", "/api/v1/workloads/pods"+tc.rest+sep(tc.rest)+"verbosity=full")
			var want struct {
				Next *int
				Pods []map[string]any
			}
			if status != http.StatusOK || json.Unmarshal(body, &want) != nil {
				t.Fatalf("REST %s: %d %s", tc.rest, status, body)
			}
			for _, p := range got.Pods.Pods {
				asREST(p)
			}
			if !reflect.DeepEqual(got.Pods.Pods, want.Pods) {
				t.Errorf("pods%s:\nGraphQL %v\n   REST %v", tc.args, got.Pods.Pods, want.Pods)
			}
			if !reflect.DeepEqual(got.Pods.Next, want.Next) {
				t.Errorf("pods%s: next %v, REST %v", tc.args, got.Pods.Next, want.Next)
			}
			if n := restCount(t, env, "acme-workloads", tc.count); got.Pods.Total != n {
				t.Errorf("pods%s: total %d, REST count %d", tc.args, got.Pods.Total, n)
			}
			countArgs := tc.args
			for _, drop := range []string{"sortBy", "sortOrder", "limit", "offset"} {
				countArgs = dropArg(countArgs, drop)
			}
			var c struct{ PodsCount int }
			env.Decode(env.GraphQL("acme-workloads", `{ podsCount`+countArgs+` }`, nil), &c)
			if c.PodsCount != got.Pods.Total {
				t.Errorf("podsCount%s = %d, total %d", countArgs, c.PodsCount, got.Pods.Total)
			}
		}

		var wl struct {
			WorkloadPods struct{ Pods []map[string]any }
		}
		env.Decode(env.GraphQL("acme-workloads", `{ workloadPods(workloadId: "`+w1+`", sortBy: NAME) { pods { `+podFields+` } } }`, nil), &wl)
		compare(t, env, wl.WorkloadPods.Pods, "/api/v1/workloads/"+w1+"/pods?sortBy=name&verbosity=full")
		var rev struct{ RevisionPods []map[string]any }
		env.Decode(env.GraphQL("acme-workloads", `{ revisionPods(revisionId: "`+r1+`", deleted: true) { `+podFields+` } }`, nil), &rev)
		compare(t, env, rev.RevisionPods, "/api/v1/workloads/inferences/revisions/"+r1+"/pods?deleted=true&verbosity=full")
	})
}

func compare(t *testing.T, env *servertest.Env, gql []map[string]any, path string) {
	t.Helper()
	status, body := servertest.PodsGET(t, env, "acme-workloads", path)
	var want struct{ Pods []map[string]any }
	if status != http.StatusOK || json.Unmarshal(body, &want) != nil || len(want.Pods) == 0 {
		t.Fatalf("REST %s: %d %s", path, status, body)
	}
	for _, p := range gql {
		asREST(p)
	}
	if !reflect.DeepEqual(gql, want.Pods) {
		t.Errorf("%s:\nGraphQL %v\n   REST %v", path, gql, want.Pods)
	}
}

func sep(query string) string {
	if query == "" {
		return "?"
	}
	return "&"
}

// dropArg removes "name: value" from a GraphQL argument list such as
// (sortBy: NAME, limit: 3); values hold no commas or parentheses here.
func dropArg(args, name string) string {
	if args == "" {
		return ""
	}
	var kept []string
	for _, a := range strings.Split(strings.Trim(args, "()"), ", ") {
		if !strings.HasPrefix(a, name+":") {
			kept = append(kept, a)
		}
	}
	if len(kept) == 0 {
		return ""
	}
	return "(" + strings.Join(kept, ", ") + ")"
}

func TestPodsGraphQLArguments(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, podsFixture(t))
		for _, tc := range []struct {
			query, want string
			next        *int
			total       int
		}{
			{`{ pods { pods { id } next total } }`, live, nil, 7},
			{`{ pods(limit: 3) { pods { id } next total } }`, "p01 p02 p03", new(3), 7},
			{`{ pods(limit: 3, offset: 6) { pods { id } next total } }`, "p06", nil, 7},
			{`{ pods(offset: 9) { pods { id } next total } }`, "", nil, 7},
			{`{ pods(deleted: false, completed: true) { pods { id } next total } }`, "p02 p09 p05", nil, 3},
			{`{ pods(search: "") { pods { id } next total } }`, live, nil, 7},
			{`{ pods(filterBy: []) { pods { id } next total } }`, live, nil, 7},
			{`{ workloadPods(workloadId: "` + w2 + `", limit: 2) { pods { id } next total } }`, "p03 p04", new(2), 3},
			{`{ workloadPods(workloadId: "` + w1 + `", deleted: true) { pods { id } next total } }`, "p10 p07", nil, 2},
		} {
			r := env.GraphQL("acme-workloads", tc.query, nil)
			var got map[string]struct {
				Pods  []json.RawMessage
				Next  *int
				Total int
			}
			env.Decode(r, &got)
			for _, l := range got {
				if keys := keysOf(t, l.Pods); keys != tc.want || !reflect.DeepEqual(l.Next, tc.next) || l.Total != tc.total {
					t.Errorf("%s: [%s] next %v total %d, want [%s] next %v total %d", tc.query, keys, l.Next, l.Total, tc.want, tc.next, tc.total)
				}
			}
		}
		var rev struct{ RevisionPods []json.RawMessage }
		env.Decode(env.GraphQL("acme-workloads", `query($r: ID!) { revisionPods(revisionId: $r) { id } }`, map[string]any{"r": r1}), &rev)
		if keys := keysOf(t, rev.RevisionPods); keys != "p03 p04" {
			t.Errorf("revisionPods = %s", keys)
		}
		for _, tc := range []struct{ query, code, msg string }{
			{`{ pods(limit: 0) { total } }`, "BAD_REQUEST", "limit must be between 1 and 500, got 0"},
			{`{ pods(limit: 501) { total } }`, "BAD_REQUEST", "limit must be between 1 and 500, got 501"},
			{`{ pods(offset: -1) { total } }`, "BAD_REQUEST", "offset must be 0 or more, got -1"},
			{`{ pods(filterBy: ["size==1"]) { total } }`, "BAD_REQUEST", `invalid filterBy "size==1": unknown field "size"`},
			{`{ podsCount(filterBy: ["createdAt=^2024"]) }`, "BAD_REQUEST", `invalid filterBy "createdAt=^2024": operator "=^" does not apply to dates; use ==, !=, <= or >=`},
			{`{ pods(sortBy: SIZE) { total } }`, "BAD_REQUEST", ""},
			{`{ workloadPods(workloadId: "` + w3 + `") { total } }`, "NOT_FOUND", `workload "` + w3 + `" not found`},
			{`{ workloadPods(workloadId: "nope") { total } }`, "NOT_FOUND", `workload "nope" not found`},
			{`{ revisionPods(revisionId: "` + r2 + `") { id } }`, "NOT_FOUND", `revision "` + r2 + `" not found`},
		} {
			r := env.GraphQL("acme-workloads", tc.query, nil)
			if r.Code() != tc.code || (tc.msg != "" && r.Errors[0].Message != tc.msg) {
				t.Errorf("%s: %+v, want %s %q", tc.query, r.Errors, tc.code, tc.msg)
			}
			if tc.code == "NOT_FOUND" && r.Errors[0].Extensions["status"] != float64(404) {
				t.Errorf("%s: status %v", tc.query, r.Errors[0].Extensions["status"])
			}
		}
	})
}

// Nested fields go through the request's loaders: the pod's node (of its
// own cluster), workload and project.
func TestPodNestedFields(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, podsFixture(t))
		r := env.GraphQL("acme-workloads", `{ pods(sortBy: NAME) { pods { name node { name gpus { index } } workload { name project { name } } project { id name } } } }`, nil)
		var got struct {
			Pods struct {
				Pods []struct {
					Name string
					Node *struct {
						Name string
						GPUs []struct{ Index int }
					}
					Workload struct {
						Name    string
						Project struct{ Name string }
					}
					Project struct{ ID, Name string }
				}
			}
		}
		env.Decode(r, &got)
		var lines []string
		for _, p := range got.Pods.Pods {
			node := "-"
			if p.Node != nil {
				node = fmt.Sprintf("%s/%d", p.Node.Name, len(p.Node.GPUs))
			}
			lines = append(lines, fmt.Sprintf("%s %s %s/%s %s:%s", p.Name, node, p.Workload.Name, p.Workload.Project.Name, p.Project.ID, p.Project.Name))
		}
		// beta%5 names gpu-node-2 but runs in cluster C2, where there is no such node.
		want := []string{
			"Zeta_1 gpu-node-2/1 resnet-train/vision 1:vision",
			"alpha-0 gpu-node-1/2 resnet-train/vision 1:vision",
			"alpha-0 gpu-node-1/2 resnet-train/vision 1:vision",
			"beta%5 - resnet-train/vision 1:vision",
			"straße-6 gpu-node-1/2 llm-serve/ops 3:ops",
			"Élan-2 gpu-node-1/2 llm-serve/ops 3:ops",
			"élan-3 - llm-serve/ops 3:ops",
		}
		if !reflect.DeepEqual(lines, want) {
			t.Errorf("nested:\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
		}
	})
}

// A list costs the key lookup and one page query (plus the count when
// total is asked for, plus the workload check for a workload's pods);
// nested fields one statement per loader and level, whatever the page size.
func TestPodsStatements(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, manyPods(t, 120))
		for _, tc := range []struct {
			name string
			run  func()
			want int64
		}{
			{"REST list", func() {
				env.Do("GET", "/api/v1/workloads/pods?limit=500&search=a&filterBy=nodeName%3D@node&sortBy=name", "acme-workloads", nil, nil)
			}, 2},
			{"REST count", func() { env.Do("GET", "/api/v1/workloads/pods/count?search=a", "acme-workloads", nil, nil) }, 2},
			{"REST workload pods", func() { env.Do("GET", "/api/v1/workloads/"+w1+"/pods?limit=500", "acme-workloads", nil, nil) }, 3},
			{"REST revision pods", func() {
				env.Do("GET", "/api/v1/workloads/inferences/revisions/"+r1+"/pods", "acme-workloads", nil, nil)
			}, 3},
			{"GraphQL page", func() { env.GraphQL("acme-workloads", `{ pods(limit: 500) { pods { id } next } }`, nil) }, 2},
			{"GraphQL page and total", func() { env.GraphQL("acme-workloads", `{ pods(limit: 500) { pods { id } next total } }`, nil) }, 3},
			{"GraphQL total in a fragment", func() { env.GraphQL("acme-workloads", `{ pods(limit: 5) { ...on PodList { total } } }`, nil) }, 3},
		} {
			if n := env.Statements(tc.run); n != tc.want {
				t.Errorf("%s: %d statements, want %d", tc.name, n, tc.want)
			}
		}
		// key, page, count, then nodes, workloads, projects; GPUs; models.
		// workload.project finds the projects pod.project already loaded.
		nested := `query($limit: Int) { pods(limit: $limit) { total pods { id node { name gpus { model { name } } }
			workload { name project { name } } project { name } } } }`
		for _, limit := range []int{2, 120} {
			var r *servertest.Response
			n := env.Statements(func() { r = env.GraphQL("acme-workloads", nested, map[string]any{"limit": limit}) })
			var got struct {
				Pods struct{ Pods []json.RawMessage }
			}
			env.Decode(r, &got)
			if len(got.Pods.Pods) != limit || n != 8 {
				t.Errorf("limit %d: %d pods, %d statements, want 8", limit, len(got.Pods.Pods), n)
			}
		}
	})
}

// manyPods is the pods fixture with n more live Acme pods on both nodes,
// both workloads and both projects.
func manyPods(t *testing.T, n int) string {
	t.Helper()
	var f map[string]any
	if err := json.Unmarshal([]byte(podsFixture(t)), &f); err != nil {
		t.Fatal(err)
	}
	pods := f["pods"].([]any)
	for i := 0; i < n; i++ {
		wl, project := w1, "1"
		if i%2 == 1 {
			wl, project = w2, "3"
		}
		pods = append(pods, map[string]any{
			"id": fmt.Sprintf("00000000-0000-4000-8000-%012d", 1000+i), "name": fmt.Sprintf("bulk-%03d", i),
			"workloadId": wl, "projectId": project, "clusterId": c1, "nodeName": fmt.Sprintf("gpu-node-%d", 1+i%2),
			"createdAt": fmt.Sprintf("2024-02-01T00:%02d:%02d.000Z", i/60, i%60), "k8sPhase": "Running", "tenantId": 1001,
		})
	}
	f["pods"] = pods
	b, _ := json.Marshal(f)
	return string(b)
}
