package httpapi_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gpugraph/demo"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite internal/httpapi/testdata/golden.txt from the current answers")

// goldenCall is one request of the battery: the faces' answers on the demo
// data set, byte for byte, so a refactoring that changes any answer fails.
type goldenCall struct {
	name, method, path, token, body string
}

// The demo data's instants are moved so that demo.Anchor falls on this now.
var goldenNow = func() time.Time { t, _ := time.Parse(time.RFC3339, demo.Anchor); return t }()

func gql(query string) string {
	b, _ := json.Marshal(map[string]any{"query": query})
	return string(b)
}

func goldenCalls() []goldenCall {
	day := "start=2025-12-31T00:00:00Z&end=2026-01-01T00:00:00Z"
	const (
		train = "/api/v1/workloads/abac6a90-5b54-5000-9b14-72baefd89601/pods/1fc3994a-2eb2-559c-a87e-c91b75f73ea0/metrics"
		nim   = "/api/v1/workloads/47bd91de-25f3-5e00-b231-d0c1d74cfcd3/pods/539f135a-bf88-5a31-b0d0-ff918ec8a6ea/metrics"
	)
	calls := []goldenCall{
		{"gql vms nested", "POST", "/graphql", "acme-operator", gql(`{ vms(limit: 500) { total next vms { id name status statusReason createdAt gpuIds gpuModelName gpuManufacturer tearingDown interruptedAt cpuCores ramGb node { id name status leavingAt gpus { index address health failedReason utilization memoryUsedBytes model { name memoryGb } vm { id } } } gpus { id address } gpuModel { id } } } }`)},
		{"gql vms page", "POST", "/graphql", "acme-reader", gql(`{ vms(status: [RUNNING, STOPPED], offset: 2, limit: 3) { total next vms { id status } } }`)},
		{"gql vm other org", "POST", "/graphql", "acme-operator", gql(`{ vm(id: "vm-globex-sdxl-h100") { id } }`)},
		{"gql nodes", "POST", "/graphql", "acme-reader", gql(`{ nodes { id name clusterId nodePool status agentVersion fabricId cpuCores ramGb diskGb leavingAt gpus { id uuid modelId health vm { id name } node { name } } vms { id status } } }`)},
		{"gql nodes offline", "POST", "/graphql", "globex-operator", gql(`{ nodes(status: [OFFLINE, REMOVED]) { id vms { id } } }`)},
		{"gql node", "POST", "/graphql", "initech-operator", gql(`{ node(id: "node-dgx-h100-01") { name vms { id } gpus { vm { id } } } }`)},
		{"gql pods full", "POST", "/graphql", "acme-operator", gql(`{ pods(limit: 500, sortBy: CREATED_AT, sortOrder: DESC) { total next pods { name priorityClassName id workloadId revisionId clusterId projectId nodeName createdAt completedAt containers { name image startedAt } currentNodePool requestedNodePools requestedResources { gpuRequestType gpu { limit request } gpuMemory { limit request } cpu { limit request } cpuMemory { limit request } extendedResources { resource quantity exclude } } allocatedResources { gpu gpuMemory cpu cpuMemory } tolerations { key operator value effect tolerationSeconds } k8sPhase ip task nodeAffinity { required { nodeSelectorTerms { matchExpressions { key operator values } } } } tenantId k8sPhaseUpdatedAt updatedAt deletedAt projectName workloadName node { name gpus { index model { name } } } workload { id name } project { id name } } } }`)},
		{"gql pods filtered", "POST", "/graphql", "globex-operator", gql(`{ pods(filterBy: ["k8sPhase==Running", "nodeName=^dgx"], search: "net", sortBy: NAME, limit: 7, offset: 1, completed: false) { total next pods { id name nodeName } } }`)},
		{"gql pods deleted", "POST", "/graphql", "acme-operator", gql(`{ pods(deleted: true, sortBy: DELETED_AT) { total pods { id deletedAt } } }`)},
		{"gql podsCount", "POST", "/graphql", "acme-operator", gql(`{ a: podsCount b: podsCount(filterBy: ["k8sPhase==Running"]) c: podsCount(search: "zoë") d: podsCount(deleted: true) e: podsCount(completed: true) }`)},
		{"gql workloadPods", "POST", "/graphql", "acme-operator", gql(`{ workloadPods(workloadId: "47bd91de-25f3-5e00-b231-d0c1d74cfcd3", sortBy: NODE_NAME) { total next pods { id name node { name } workload { name } } } }`)},
		{"gql workloadPods other", "POST", "/graphql", "globex-operator", gql(`{ workloadPods(workloadId: "47bd91de-25f3-5e00-b231-d0c1d74cfcd3") { total } }`)},
		{"gql revisionPods", "POST", "/graphql", "acme-operator", gql(`{ a: revisionPods(revisionId: "9cf9b09b-4b08-5dfa-add1-9a3fa4d41482") { id name k8sPhase } b: revisionPods(revisionId: "3e56f9ad-cb4f-55b4-b9a8-17aa2b9d790b", deleted: true) { id deletedAt } }`)},
		{"gql bad filter", "POST", "/graphql", "acme-operator", gql(`{ pods(filterBy: ["nope==1"]) { total } }`)},
		{"gql bad limit pods", "POST", "/graphql", "acme-operator", gql(`{ pods(limit: 501) { total } }`)},
		{"gql bad limit vms", "POST", "/graphql", "acme-operator", gql(`{ vms(limit: 0) { total } }`)},
		{"gql podMetrics", "POST", "/graphql", "acme-operator", gql(`{ podMetrics(workloadId: "abac6a90-5b54-5000-9b14-72baefd89601", podId: "1fc3994a-2eb2-559c-a87e-c91b75f73ea0", metricTypes: [GPU_UTILIZATION, GPU_UTILIZATION_PER_GPU, CPU_USAGE_CORES, NIM_NUM_REQUESTS_RUNNING], start: "2025-12-31T12:00:00Z", end: "2026-01-01T00:00:00Z", numberOfSamples: 5) { omittedTypes measurements { type labels values { value timestamp } } } }`)},
		{"gql podMetrics nim", "POST", "/graphql", "acme-operator", gql(`{ podMetrics(workloadId: "47bd91de-25f3-5e00-b231-d0c1d74cfcd3", podId: "539f135a-bf88-5a31-b0d0-ff918ec8a6ea", metricTypes: [NIM_TIME_TO_FIRST_TOKEN_SECONDS_PERCENTILES, NIM_E2E_REQUEST_LATENCY_SECONDS_PERCENTILES, NIM_GPU_CACHE_USAGE_PERC], start: "2025-12-31T00:00:00Z", end: "2026-01-01T00:00:00Z", numberOfSamples: 4) { omittedTypes measurements { type labels values { value timestamp } } } }`)},
		{"gql podMetrics bad", "POST", "/graphql", "acme-operator", gql(`{ podMetrics(workloadId: "abac6a90-5b54-5000-9b14-72baefd89601", podId: "1fc3994a-2eb2-559c-a87e-c91b75f73ea0", metricTypes: [GPU_UTILIZATION], start: "2026-01-01T00:00:00Z", end: "2025-12-31T00:00:00Z") { omittedTypes } }`)},
		// One root field each: root fields resolve concurrently, so two errors may come in either order.
		{"gql forbidden vms", "POST", "/graphql", "acme-metrics", gql(`{ vms { total } }`)},
		{"gql forbidden pods", "POST", "/graphql", "acme-metrics", gql(`{ pods { total } }`)},
		{"gql no key", "POST", "/graphql", "", gql(`{ vms { total } }`)},
		{"gql parse error", "POST", "/graphql", "acme-operator", gql(`{ vms { total `)},
		{"gql unknown field", "POST", "/graphql", "acme-operator", gql(`{ vms { nope } }`)},

		{"rest pods brief", "GET", "/api/v1/workloads/pods?limit=500", "acme-operator", ""},
		{"rest pods full", "GET", "/api/v1/workloads/pods?limit=500&verbosity=full&sortBy=createdAt&sortOrder=desc", "globex-operator", ""},
		{"rest pods filtered", "GET", "/api/v1/workloads/pods?limit=3&offset=2&sortBy=name&filterBy=k8sPhase==Running&filterBy=nodeName=^dgx&verbosity=full", "acme-operator", ""},
		{"rest pods search", "GET", "/api/v1/workloads/pods?search=%E3%83%87%E3%83%BC%E3%82%BF&verbosity=full", "initech-operator", ""},
		{"rest pods like", "GET", "/api/v1/workloads/pods?filterBy=name=@50%25", "acme-operator", ""},
		{"rest pods completed", "GET", "/api/v1/workloads/pods?completed=true&deleted=true&sortBy=completedAt", "acme-operator", ""},
		{"rest pods bad sort", "GET", "/api/v1/workloads/pods?sortBy=nope", "acme-operator", ""},
		{"rest pods bad filter", "GET", "/api/v1/workloads/pods?filterBy=name=~x", "acme-operator", ""},
		{"rest pods bad limit", "GET", "/api/v1/workloads/pods?limit=0", "acme-operator", ""},
		{"rest pods bad bool", "GET", "/api/v1/workloads/pods?deleted=yes", "acme-operator", ""},
		{"rest pods forbidden", "GET", "/api/v1/workloads/pods", "acme-metrics", ""},
		{"rest pods no key", "GET", "/api/v1/workloads/pods", "", ""},
		{"rest count", "GET", "/api/v1/workloads/pods/count?filterBy=nodeName=^dgx", "acme-operator", ""},
		{"rest count deleted", "GET", "/api/v1/workloads/pods/count?deleted=true&search=chat", "acme-operator", ""},
		{"rest workload pods", "GET", "/api/v1/workloads/47bd91de-25f3-5e00-b231-d0c1d74cfcd3/pods?verbosity=full", "acme-operator", ""},
		{"rest workload pods other", "GET", "/api/v1/workloads/47bd91de-25f3-5e00-b231-d0c1d74cfcd3/pods", "globex-operator", ""},
		{"rest revision pods", "GET", "/api/v1/workloads/inferences/revisions/9cf9b09b-4b08-5dfa-add1-9a3fa4d41482/pods", "acme-operator", ""},
		{"rest revision pods deleted", "GET", "/api/v1/workloads/inferences/revisions/3e56f9ad-cb4f-55b4-b9a8-17aa2b9d790b/pods?deleted=true&verbosity=full", "acme-operator", ""},
		{"rest revision other", "GET", "/api/v1/workloads/inferences/revisions/3e56f9ad-cb4f-55b4-b9a8-17aa2b9d790b/pods", "initech-operator", ""},
		{"rest metrics", "GET", train + "?metricType=GPU_UTILIZATION&metricType=GPU_MEMORY_USAGE_BYTES_PER_GPU&metricType=CPU_MEMORY_USAGE_BYTES&numberOfSamples=6&" + day, "acme-operator", ""},
		{"rest metrics 207", "GET", train + "?metricType=GPU_UTILIZATION&metricType=NIM_NUM_REQUESTS_WAITING&numberOfSamples=3&" + day, "acme-operator", ""},
		{"rest metrics nim", "GET", nim + "?metricType=NIM_TIME_TO_FIRST_TOKEN_SECONDS_PERCENTILES&metricType=NIM_NUM_REQUESTS_RUNNING&numberOfSamples=24&" + day, "acme-operator", ""},
		{"rest metrics raw", "GET", train + "?metricType=CPU_USAGE_CORES&start=2025-12-31T23:00:00Z&end=2026-01-01T00:00:00Z", "acme-operator", ""},
		{"rest metrics csv", "GET", train + "?metricType=GPU_UTILIZATION_PER_GPU&numberOfSamples=3&" + day + "&format=csv", "acme-operator", ""},
		{"rest metrics bad", "GET", train + "?metricType=NOPE&" + day, "acme-operator", ""},
		{"rest metrics no type", "GET", train + "?" + day, "acme-operator", ""},
		{"rest metrics other", "GET", train + "?metricType=GPU_UTILIZATION&" + day, "globex-operator", ""},
		{"rest metrics samples bad", "POST", "/api/v1/metrics/samples", "acme-metrics", `{"samples":[{"podId":"nope"}]}`},
	}
	for _, id := range []string{
		"vm-restart-ok-running", "vm-restart-ok-running-pod", "vm-restart-ok-stopped", "vm-restart-ok-failed",
		"vm-restart-ok-pod-stopped", "vm-restart-ok-pod-failed", "vm-interrupted-resumes", "vm-node-removed",
		"vm-globex-sdxl-h100", "vm-serving-readonly", "vm-terminated", "vm-pending", "vm-deploying",
		"vm-node-removed-no-capacity", "vm-pod-stopping", "vm-node-offline", "vm-interrupted", "vm-pod-node-offline",
		"vm-no-infiniband", "vm-no-amd-grant", "vm-busy-failed-gpu", "vm-busy-failed-gpu-pod", "vm-busy-no-free-gpus",
		"vm-busy-host-resources", "vm-no-ip-capacity",
	} {
		calls = append(calls, goldenCall{"rest restart " + id, "POST", "/v1/vms/" + id + "/restart", "acme-operator", ""})
		calls = append(calls, goldenCall{"gql restart " + id, "POST", "/graphql", "acme-operator",
			gql(fmt.Sprintf(`mutation { restartVm(id: %q) { id status statusReason nodeId gpuIds gpuModelName gpuManufacturer tearingDown interruptedAt node { name } gpus { index address } } }`, id))})
	}
	calls = append(calls,
		goldenCall{"rest restart forbidden", "POST", "/v1/vms/vm-pending/restart", "acme-reader", ""},
		goldenCall{"rest restart no key", "POST", "/v1/vms/vm-pending/restart", "", ""},
		goldenCall{"gql vms after restarts", "POST", "/graphql", "acme-operator", gql(`{ vms(limit: 500) { vms { id status statusReason nodeId gpuIds tearingDown } } }`)},
	)
	return calls
}

// TestGoldenAnswers replays the battery on the demo data and compares every
// status, Content-Type and body with testdata/golden.txt; run with
// -update-golden to rewrite it after an intended change of an answer.
func TestGoldenAnswers(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		fixture, err := demo.JSON(goldenNow)
		if err != nil {
			t.Fatal(err)
		}
		env := servertest.New(t, st, string(fixture))
		var out bytes.Buffer
		for _, c := range goldenCalls() {
			var body []byte
			if c.body != "" {
				body = []byte(c.body)
			}
			resp := env.Request(c.method, c.path, c.token, body, nil)
			var b bytes.Buffer
			_, _ = b.ReadFrom(resp.Body)
			resp.Body.Close()
			fmt.Fprintf(&out, "=== %s\n%s %s\n%d %s retry-after=%q\n%s\n", c.name, c.method, c.path,
				resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Retry-After"), strings.TrimRight(b.String(), "\n"))
		}
		path := filepath.Join("testdata", "golden.txt")
		if *updateGolden {
			if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./internal/httpapi -run TestGoldenAnswers -update-golden)", err)
		}
		if !bytes.Equal(want, out.Bytes()) {
			diffLines(t, string(want), out.String())
		}
	})
}

// diffLines reports the first lines where got differs from want.
func diffLines(t *testing.T, want, got string) {
	t.Helper()
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	shown := 0
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			t.Errorf("line %d:\nwant %.600s\n got %.600s", i+1, a, b)
			if shown++; shown == 8 {
				break
			}
		}
	}
}
