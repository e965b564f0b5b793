package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"gpugraph/internal/httpapi/servertest"
)

// The pods fixture: two tenants whose pods would match the same filters, so
// that any leak between them shows up as an unexpected id. Pods are named in
// tests by key (p01…p10 are Acme's, g01…g03 Globex's); hours are hours after
// 2024-01-01T00:00:00Z.
//
// Acme (tenant 1001), projects 1 "vision" and 3 "ops", workloads W1
// resnet-train (project 1) and W2 llm-serve (project 3), revision R1 of W2:
//
//	key  name      wl rev node  pool    cluster created completed deleted phase     prio
//	p01  alpha-0   W1 -   node1 default C1      0       -         -       Running   high
//	p02  Zeta_1    W1 -   node2 pool-b  C1      1       5         -       Succeeded low
//	p03  Élan-2    W2 R1  node1 default C1      1       -         -       Running   high
//	p04  élan-3    W2 R1  -     -       C1      2       -         -       Pending   high
//	p05  beta%5    W1 -   node2 default C2      3       6         -       Failed    low
//	p06  straße-6  W2 -   node1 pool-b  C1      4       -         -       Running   ""
//	p09  alpha-0   W1 -   node1 -       C1      2       7         -       Succeeded high
//	p07  alpha-7   W1 -   -     -       C1      4       5         7       Succeeded low
//	p08  Σigma-8   W2 R1  node2 default C1      5       -         8       Running   high
//	p10  delta-10  W1 -   node1 default C1      3       6         7       Failed    low
//
// Globex (tenant 1002), project 2 "globex-research", workload W3 globex-job,
// revision R2 of W3:
//
//	g01  alpha-0   W3 R2  node1 default C1      0       -         -       Running   high
//	g02  Élan-g    W3 -   -     -       C1      1       -         -       Pending   high
//	g03  alpha-7   W3 -   -     -       C1      4       5         7       Succeeded low
//
// node1 and node2 are gpu-node-1 and gpu-node-2, both of cluster C1.
const (
	c1 = "71f69d83-ba66-4822-adf5-55ce55efd210"
	c2 = "0a1b2c3d-0000-4000-8000-000000000002"
	w1 = "11111111-1111-4111-8111-111111111111"
	w2 = "22222222-2222-4222-8222-222222222222"
	w3 = "33333333-3333-4333-8333-333333333333"
	r1 = "44444444-4444-4444-8444-444444444444"
	r2 = "55555555-5555-4555-8555-555555555555"
)

// podKeys maps each key to its pod id; ids sort as their keys do.
var podKeys = func() map[string]string {
	m := map[string]string{}
	for i := 1; i <= 10; i++ {
		m[fmt.Sprintf("p%02d", i)] = fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
	}
	for i := 1; i <= 3; i++ {
		m[fmt.Sprintf("g%02d", i)] = fmt.Sprintf("00000000-0000-4000-8000-%012d", 100+i)
	}
	return m
}()

func keyOf(id string) string {
	for k, v := range podKeys {
		if v == id {
			return k
		}
	}
	return "?" + id
}

func hour(h int) string { return fmt.Sprintf("2024-01-01T%02d:00:00.000Z", h) }

type podRow struct {
	key, name, workload, rev, node, pool, cluster string
	created, completed, deleted                   int // -1: none
	phase, prio, project                          string
	tenant                                        int
}

var podRows = []podRow{
	{"p01", "alpha-0", w1, "", "gpu-node-1", "default", c1, 0, -1, -1, "Running", "high", "1", 1001},
	{"p02", "Zeta_1", w1, "", "gpu-node-2", "pool-b", c1, 1, 5, -1, "Succeeded", "low", "1", 1001},
	{"p03", "Élan-2", w2, r1, "gpu-node-1", "default", c1, 1, -1, -1, "Running", "high", "3", 1001},
	{"p04", "élan-3", w2, r1, "", "", c1, 2, -1, -1, "Pending", "high", "3", 1001},
	{"p05", "beta%5", w1, "", "gpu-node-2", "default", c2, 3, 6, -1, "Failed", "low", "1", 1001},
	{"p06", "straße-6", w2, "", "gpu-node-1", "pool-b", c1, 4, -1, -1, "Running", "", "3", 1001},
	{"p07", "alpha-7", w1, "", "", "", c1, 4, 5, 7, "Succeeded", "low", "1", 1001},
	{"p08", "Σigma-8", w2, r1, "gpu-node-2", "default", c1, 5, -1, 8, "Running", "high", "3", 1001},
	{"p09", "alpha-0", w1, "", "gpu-node-1", "", c1, 2, 7, -1, "Succeeded", "high", "1", 1001},
	{"p10", "delta-10", w1, "", "gpu-node-1", "default", c1, 3, 6, 7, "Failed", "low", "1", 1001},
	{"g01", "alpha-0", w3, r2, "gpu-node-1", "default", c1, 0, -1, -1, "Running", "high", "2", 1002},
	{"g02", "Élan-g", w3, "", "", "", c1, 1, -1, -1, "Pending", "high", "2", 1002},
	{"g03", "alpha-7", w3, "", "", "", c1, 4, 5, 7, "Succeeded", "low", "2", 1002},
}

// fullPods are written out key for key as the REST API answers them with
// verbosity=full, to check that a fixture pod comes back identical: p01 with
// every nested object, p04 with every unknown value.
var fullPods = map[string]string{
	"p01": `{
  "name": "alpha-0", "priorityClassName": "high",
  "id": "00000000-0000-4000-8000-000000000001", "workloadId": "` + w1 + `", "revisionId": null,
  "clusterId": "` + c1 + `", "projectId": "1", "nodeName": "gpu-node-1",
  "createdAt": "2024-01-01T00:00:00.000Z", "completedAt": null,
  "containers": [{"name": "main", "image": "alpine:latest", "startedAt": "2024-01-01T00:00:05.123Z"},
                 {"name": "sidecar", "image": "busybox:1", "startedAt": null}],
  "currentNodePool": "default", "requestedNodePools": ["default", "pool-b"],
  "requestedResources": {"gpuRequestType": "portion", "gpu": {"limit": 1.5, "request": 1},
    "gpuMemory": {"limit": "2G", "request": "200M"}, "cpu": {"limit": 1.5, "request": 0.25},
    "cpuMemory": {"limit": "2G", "request": null},
    "extendedResources": [{"resource": "hardware-vendor.example/foo", "quantity": "2", "exclude": false}]},
  "allocatedResources": {"gpu": 1.5, "gpuMemory": "200Mi", "cpu": 0.5, "cpuMemory": "0", "extendedResources": []},
  "tolerations": [{"key": "", "operator": "Exists", "value": "", "effect": "NoExecute", "tolerationSeconds": 10},
                  {"key": "gpu", "operator": "Equal", "value": "h100", "effect": "NoSchedule", "tolerationSeconds": null}],
  "k8sPhase": "Running", "ip": "10.244.1.1", "task": "leader",
  "nodeAffinity": {
    "required": {"nodeSelectorTerms": [{"matchExpressions": [
      {"key": "gpu", "operator": "In", "values": ["h100", "h200"]},
      {"key": "spot", "operator": "DoesNotExist", "values": []}]}]},
    "preferred": {"nodeSelectorTerms": [{"weight": 1, "preference": {"matchExpressions": [
      {"key": "zone", "operator": "In", "values": ["a"]}]}}]}},
  "tenantId": 1001, "k8sPhaseUpdatedAt": "2024-01-01T00:01:00.000Z", "updatedAt": "2024-01-01T00:02:00.500Z",
  "deletedAt": null, "projectName": "vision", "workloadName": "resnet-train"
}`,
	"p04": `{
  "name": "élan-3", "priorityClassName": "high",
  "id": "00000000-0000-4000-8000-000000000004", "workloadId": "` + w2 + `", "revisionId": "` + r1 + `",
  "clusterId": "` + c1 + `", "projectId": "3", "nodeName": null,
  "createdAt": "2024-01-01T02:00:00.000Z", "completedAt": null, "containers": [],
  "currentNodePool": null, "requestedNodePools": [], "requestedResources": null, "allocatedResources": null,
  "tolerations": [], "k8sPhase": "Pending", "ip": null, "task": null,
  "nodeAffinity": {"required": null, "preferred": null},
  "tenantId": 1001, "k8sPhaseUpdatedAt": "2024-01-01T02:00:00.000Z", "updatedAt": "2024-01-01T02:00:00.000Z",
  "deletedAt": null, "projectName": "ops", "workloadName": "llm-serve"
}`,
}

// podsFixture is the fixture above as a fixture file.
func podsFixture(t testing.TB) string {
	t.Helper()
	var pods []any
	for _, r := range podRows {
		if full, ok := fullPods[r.key]; ok {
			var p any
			if err := json.Unmarshal([]byte(full), &p); err != nil {
				t.Fatalf("fullPods[%s]: %v", r.key, err)
			}
			pods = append(pods, p)
			continue
		}
		p := map[string]any{
			"id": podKeys[r.key], "name": r.name, "workloadId": r.workload, "clusterId": r.cluster,
			"projectId": r.project, "createdAt": hour(r.created), "k8sPhase": r.phase,
			"priorityClassName": r.prio, "tenantId": r.tenant,
		}
		for k, v := range map[string]string{"revisionId": r.rev, "nodeName": r.node, "currentNodePool": r.pool} {
			if v != "" {
				p[k] = v
			}
		}
		if r.completed >= 0 {
			p["completedAt"] = hour(r.completed)
		}
		if r.deleted >= 0 {
			p["deletedAt"] = hour(r.deleted)
		}
		pods = append(pods, p)
	}
	f := map[string]any{
		"gpuModels": []any{map[string]any{"id": "h100-80gb", "name": "NVIDIA H100 80GB HBM3", "manufacturer": "NVIDIA", "memoryGb": 80}},
		"nodes": []any{
			node("n1", "gpu-node-1", 2), node("n2", "gpu-node-2", 1),
		},
		"organizations": []any{
			map[string]any{"id": "org-acme", "name": "Acme", "tenantId": 1001},
			map[string]any{"id": "org-globex", "name": "Globex", "tenantId": 1002},
		},
		"apiKeys": []any{
			map[string]any{"token": "acme-workloads", "organizationId": "org-acme", "permissions": []string{"workloads.read"}},
			map[string]any{"token": "acme-reader", "organizationId": "org-acme", "permissions": []string{"compute.read"}},
			map[string]any{"token": "globex-workloads", "organizationId": "org-globex", "permissions": []string{"workloads.read"}},
		},
		"projects": []any{
			map[string]any{"id": "1", "name": "vision", "tenantId": 1001},
			map[string]any{"id": "2", "name": "globex-research", "tenantId": 1002},
			map[string]any{"id": "3", "name": "ops", "tenantId": 1001},
		},
		"workloads": []any{
			map[string]any{"id": w1, "name": "resnet-train", "projectId": "1", "clusterId": c1},
			map[string]any{"id": w2, "name": "llm-serve", "projectId": "3", "clusterId": c1},
			map[string]any{"id": w3, "name": "globex-job", "projectId": "2", "clusterId": c1},
		},
		"revisions": []any{
			map[string]any{"id": r1, "workloadId": w2},
			map[string]any{"id": r2, "workloadId": w3},
		},
		"pods": pods,
	}
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func node(id, name string, gpus int) map[string]any {
	var gs []any
	for i := 0; i < gpus; i++ {
		gs = append(gs, map[string]any{"id": fmt.Sprintf("%s-g%d", id, i), "index": i, "uuid": fmt.Sprintf("GPU-%s-%d", id, i),
			"address": fmt.Sprintf("0000:%02X:00.0", 0x18+i), "modelId": "h100-80gb", "health": "healthy"})
	}
	return map[string]any{"id": id, "name": name, "clusterId": c1, "nodePool": "default", "status": "online",
		"agentVersion": "2.6.1", "cpuCores": 64, "ramGb": 512, "diskGb": 1000, "gpus": gs}
}

// listBody is a REST list answer.
type listBody struct {
	Next *int              `json:"next"`
	Pods []json.RawMessage `json:"pods"`
}

// restList GETs a list that must answer 200 and gives its pods as keys
// ("p01 p02") and next (-1 when absent).
func restList(t *testing.T, env *servertest.Env, token, pathAndQuery string) (string, int) {
	t.Helper()
	status, body := servertest.PodsGET(t, env, token, pathAndQuery)
	if status != http.StatusOK {
		t.Fatalf("GET %s = %d %s", pathAndQuery, status, body)
	}
	var l listBody
	if err := json.Unmarshal(body, &l); err != nil {
		t.Fatalf("GET %s: %v", pathAndQuery, err)
	}
	next := -1
	if l.Next != nil {
		next = *l.Next
	}
	return keysOf(t, l.Pods), next
}

func keysOf(t *testing.T, pods []json.RawMessage) string {
	t.Helper()
	keys := make([]string, len(pods))
	for i, p := range pods {
		var x struct{ ID string }
		if err := json.Unmarshal(p, &x); err != nil {
			t.Fatal(err)
		}
		keys[i] = keyOf(x.ID)
	}
	return strings.Join(keys, " ")
}

// restCount GETs the count, which must answer 200.
func restCount(t *testing.T, env *servertest.Env, token, query string) int {
	t.Helper()
	path := "/api/v1/workloads/pods/count" + query
	status, body := servertest.PodsGET(t, env, token, path)
	var c struct{ Count *int }
	if status != http.StatusOK || json.Unmarshal(body, &c) != nil || c.Count == nil {
		t.Fatalf("GET %s = %d %s", path, status, body)
	}
	return *c.Count
}

func reversed(keys string) string {
	f := strings.Fields(keys)
	slices.Reverse(f)
	return strings.Join(f, " ")
}

// q builds a query string from name, value pairs, escaping each value.
func q(pairs ...string) string {
	v := make([]string, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		v = append(v, pairs[i]+"="+url.QueryEscape(pairs[i+1]))
	}
	if len(v) == 0 {
		return ""
	}
	return "?" + strings.Join(v, "&")
}

// messageOf is the message of a Run:ai error body.
func messageOf(t *testing.T, body []byte) string {
	t.Helper()
	var e struct{ Message string }
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("error body %s: %v", body, err)
	}
	return e.Message
}
