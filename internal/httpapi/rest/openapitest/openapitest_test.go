package openapitest

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// pod is the seed's example pod with the values its own schema refuses
// written as the schema wants them: quantity a string, tolerationSeconds an
// integer, cpuMemory "0" (the seed's "0B" does not match the pattern).
const pod = `{
  "name": "pod-of-a-very-important-job", "priorityClassName": "high-priority",
  "id": "123e4567-e89b-12d3-a456-426614174000", "workloadId": "123e4567-e89b-12d3-a456-426614174000",
  "revisionId": null, "clusterId": "71f69d83-ba66-4822-adf5-55ce55efd210", "projectId": "1",
  "nodeName": "gpu-node-1", "createdAt": "2022-01-01T03:49:52.531Z", "completedAt": null,
  "containers": [{"name": "alpine", "image": "alpine:latest", "startedAt": null}],
  "currentNodePool": "default", "requestedNodePools": ["default"],
  "requestedResources": {"gpuRequestType": "portion", "gpu": {"limit": 1.5, "request": 1},
    "gpuMemory": {"limit": "2G", "request": "200M"}, "cpu": null, "cpuMemory": {"limit": null, "request": "200M"},
    "extendedResources": [{"resource": "hardware-vendor.example/foo", "quantity": "2", "exclude": false}]},
  "allocatedResources": {"gpu": 1.5, "gpuMemory": "200Mi", "cpu": 0.5, "cpuMemory": "0", "extendedResources": null},
  "tolerations": [{"key": "", "operator": "Exists", "value": "", "effect": "NoExecute", "tolerationSeconds": 10}],
  "k8sPhase": "Pending", "ip": null, "task": null,
  "nodeAffinity": {"required": null, "preferred": {"nodeSelectorTerms": [{"weight": 1, "preference": null}]}},
  "tenantId": 1001, "k8sPhaseUpdatedAt": "2022-06-08T11:28:24.131Z", "updatedAt": "2022-06-08T11:28:24.131Z",
  "deletedAt": null, "projectName": "my-project", "workloadName": "my-workload"
}`

// recorder is a testing.TB that keeps failures instead of failing.
type recorder struct {
	testing.TB
	failed []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, a ...any) {
	r.failed = append(r.failed, fmt.Sprintf(format, a...))
}
func (r *recorder) Fatalf(format string, a ...any) {
	r.failed = append(r.failed, "fatal: "+fmt.Sprintf(format, a...))
}

func check(t *testing.T, ref, body string) []string {
	t.Helper()
	r := &recorder{TB: t}
	Validate(r, ref, []byte(body))
	return r.failed
}

func TestValidAnswers(t *testing.T) {
	for _, tc := range []struct{ ref, body string }{
		{"#/components/schemas/Pod1", pod},
		{"#/components/schemas/Pod1", strings.Replace(pod, `"gpuRequestType": "portion", `, ``, 1)}, // unknown: left out
		{"GET /api/v1/workloads/pods 200", `{"next": 50, "pods": [` + pod + `]}`},
		{"GET /api/v1/workloads/pods 200", `{"pods": []}`},
		{"GET /api/v1/workloads/{workloadId}/pods 200", `{"pods": [` + pod + `]}`},
		{"GET /api/v1/workloads/inferences/revisions/{revisionId}/pods 200", `{"pods": [` + pod + `]}`},
		{"GET /api/v1/workloads/pods/count 200", `{"count": 3}`},
		{"GET /api/v1/workloads/pods 401", `{"code": 401, "message": "unknown API key"}`},
		{"GET /api/v1/workloads/{workloadId}/pods 404", `{"code": 404, "message": "workload not found"}`},
		{"#/components/schemas/Error", `{"code": 400, "message": "bad", "details": "more"}`},
	} {
		if failed := check(t, tc.ref, tc.body); len(failed) > 0 {
			t.Errorf("%s: valid body refused: %v", tc.ref, failed)
		}
	}
}

func TestInvalidAnswers(t *testing.T) {
	for _, tc := range []struct{ name, ref, body string }{
		{"pods missing", "GET /api/v1/workloads/pods 200", `{"next": 1}`},
		{"next not an integer", "GET /api/v1/workloads/pods 200", `{"next": "1", "pods": []}`},
		{"count missing", "GET /api/v1/workloads/pods/count 200", `{}`},
		{"null name", "#/components/schemas/Pod1", strings.Replace(pod, `"name": "pod-of-a-very-important-job"`, `"name": null`, 1)},
		{"null projectName", "#/components/schemas/Pod1", strings.Replace(pod, `"projectName": "my-project"`, `"projectName": null`, 1)},
		{"null projectId", "#/components/schemas/Pod1", strings.Replace(pod, `"projectId": "1"`, `"projectId": null`, 1)},
		{"missing k8sPhase", "#/components/schemas/Pod1", strings.Replace(pod, `"k8sPhase": "Pending",`, ``, 1)},
		{"id not a uuid", "#/components/schemas/Pod1", strings.Replace(pod, `"id": "123e4567-e89b-12d3-a456-426614174000"`, `"id": "pod-1"`, 1)},
		{"time not RFC 3339", "#/components/schemas/Pod1", strings.Replace(pod, `"createdAt": "2022-01-01T03:49:52.531Z"`, `"createdAt": "2022-01-01 03:49"`, 1)},
		{"quantity a number", "#/components/schemas/Pod1", strings.Replace(pod, `"quantity": "2"`, `"quantity": 2`, 1)},
		{"tolerationSeconds a string", "#/components/schemas/Pod1", strings.Replace(pod, `"tolerationSeconds": 10`, `"tolerationSeconds": "10"`, 1)},
		{"bad gpuRequestType", "#/components/schemas/Pod1", strings.Replace(pod, `"gpuRequestType": "portion"`, `"gpuRequestType": "half"`, 1)},
		// Strict OpenAPI 3.0.3: nullable does not add null to an enum.
		{"null gpuRequestType", "#/components/schemas/Pod1", strings.Replace(pod, `"gpuRequestType": "portion"`, `"gpuRequestType": null`, 1)},
		{"the seed's 0B", "#/components/schemas/Pod1", strings.Replace(pod, `"cpuMemory": "0"`, `"cpuMemory": "0B"`, 1)},
		{"bad quantity", "#/components/schemas/Pod1", strings.Replace(pod, `"gpuMemory": "200Mi"`, `"gpuMemory": "lots"`, 1)},
		{"null nodeAffinity", "#/components/schemas/Pod1", strings.Replace(pod, `"nodeAffinity": {"required": null, "preferred": {"nodeSelectorTerms": [{"weight": 1, "preference": null}]}}`, `"nodeAffinity": null`, 1)},
		{"error without message", "GET /api/v1/workloads/pods 403", `{"code": 403}`},
		{"not JSON", "GET /api/v1/workloads/pods/count 200", `{"count": `},
	} {
		if failed := check(t, tc.ref, tc.body); len(failed) == 0 {
			t.Errorf("%s: invalid body accepted", tc.name)
		}
	}
}

func TestBadReferences(t *testing.T) {
	for _, ref := range []string{
		"GET /api/v1/nope 200",
		"GET /api/v1/workloads/pods/count 404", // not listed, no default
		"GET /api/v1/workloads/pods",
		"#/components/schemas/Nope",
	} {
		failed := check(t, ref, `{}`)
		if len(failed) != 1 || !strings.HasPrefix(failed[0], "fatal: ") {
			t.Errorf("%s: failures %v, want one fatal", ref, failed)
		}
	}
}

// vm is a VM answer as the server writes it.
const vm = `{"capabilityTier": "", "computeClass": "", "createdAt": "2026-01-02T03:04:05.000Z", "diskSizeGb": 100,
  "endpointUrl": "", "gpuCount": 1, "gpuManufacturer": "NVIDIA", "gpuModelId": "h100-80gb", "gpuModelName": "NVIDIA H100 80GB HBM3",
  "id": "vm-1", "imageUrl": "", "managedBy": "", "name": "train-a", "organizationId": "org-1", "pricePerHourCents": 250,
  "provisioningStage": "", "public": false, "resourceSize": "", "serviceType": "", "status": "running",
  "statusReason": "user_restarted", "tier": "", "volumeGb": 0, "nodeId": "n1", "gpuIds": ["g1"], "cpuCores": 16,
  "ramGb": 128, "tearingDown": false, "interruptedAt": null}`

// exchange is one request (with a key unless noKey) and its JSON answer.
func exchange(method, target string, status int, body string, header ...string) Exchange {
	r := httptest.NewRequest(method, target, nil)
	r.Header.Set("Authorization", "Bearer acme-operator")
	h := http.Header{"Content-Type": {"application/json"}}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Authorization" {
			r.Header.Del("Authorization")
			continue
		}
		h.Set(header[i], header[i+1])
	}
	return Exchange{Request: r, Status: status, Header: h, Body: []byte(body)}
}

func TestCheckExchangeAcceptsValid(t *testing.T) {
	for name, ex := range map[string]Exchange{
		"restart":            exchange("POST", "/v1/vms/vm-1/restart", 200, vm),
		"restart busy":       exchange("POST", "/v1/vms/vm-1/restart", 503, `{"error": {"code": "VM_NODE_BUSY", "message": "GPU 0000:3B:00.0 failed"}}`, "Retry-After", "30"),
		"pods":               exchange("GET", "/api/v1/workloads/pods?limit=5&sortBy=name&filterBy=k8sPhase==Running", 200, `{"pods": [`+pod+`]}`),
		"pods bad filter":    exchange("GET", "/api/v1/workloads/pods?filterBy=nope==1", 400, `{"code": 400, "message": "unknown field nope"}`),
		"no key":             exchange("GET", "/api/v1/workloads/pods/count", 401, `{"code": 401, "message": "no API key"}`, "Authorization", ""),
		"unknown path":       exchange("GET", "/v1/nope", 404, `404 page not found`, "Content-Type", "text/plain; charset=utf-8"),
		"wrong method":       exchange("GET", "/v1/vms/vm-1/restart", 405, `Method Not Allowed`, "Content-Type", "text/plain; charset=utf-8"),
		"health":             exchange("GET", "/healthz", 200, "ok\n", "Content-Type", "text/plain; charset=utf-8", "Authorization", ""),
		"graphql is not its": exchange("POST", "/graphql", 418, `whatever`),
	} {
		if err := CheckExchange(ex); err != nil {
			t.Errorf("%s: refused: %v", name, err)
		}
	}
}

// TestCheckExchangeRejectsWrong: deliberately wrong answers, each of a
// kind the document rules out.
func TestCheckExchangeRejectsWrong(t *testing.T) {
	gz := func(s string) []byte {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		_, _ = w.Write([]byte(s))
		_ = w.Close()
		return b.Bytes()
	}
	extra := exchange("POST", "/v1/vms/vm-1/restart", 200, strings.Replace(vm, `"tier": ""`, `"tier": "", "secret": "x"`, 1))
	gzipped := exchange("GET", "/v1/vms/vm-1", 200, "", "Content-Encoding", "gzip")
	gzipped.Body = gz(strings.Replace(vm, `"gpuIds": ["g1"]`, `"gpuIds": "g1"`, 1))
	for name, tc := range map[string]struct {
		ex   Exchange
		want string
	}{
		"undeclared property": {extra, "secret"},
		"undeclared status":   {exchange("GET", "/v1/vms", 418, `{"error": {"code": "TEAPOT", "message": "no"}}`), "status is not supported"},
		"wrong content type":  {exchange("GET", "/v1/vms/vm-1", 200, vm, "Content-Type", "text/html"), "text/html"},
		"missing Retry-After": {exchange("POST", "/v1/vms/vm-1/restart", 503, `{"error": {"code": "VM_NODE_BUSY", "message": "busy"}}`), "Retry-After"},
		"null VM field":       {exchange("GET", "/v1/vms/vm-1", 200, strings.Replace(vm, `"createdAt": "2026-01-02T03:04:05.000Z"`, `"createdAt": null`, 1)), "createdAt"},
		"gzip body checked":   {gzipped, "gpuIds"},
		"Run:ai error code":   {exchange("GET", "/api/v1/workloads/pods", 404, `{"code": 400, "message": "x"}`), "code is not the status"},
		"OpenRelay error":     {exchange("GET", "/v1/vms/x", 404, `{"code": 404, "message": "x"}`), "error"},
		// kin-openapi lets null through a nullable enum; the strict layer does not.
		"null nullable enum":     {exchange("GET", "/api/v1/workloads/pods", 200, `{"pods": [`+strings.Replace(pod, `"gpuRequestType": "portion"`, `"gpuRequestType": null`, 1)+`]}`), "gpuRequestType"},
		"served, undocumented":   {exchange("GET", "/v1/secret", 200, `{}`), "not documented"},
		"accepted a bad request": {exchange("GET", "/api/v1/workloads/pods?limit=501", 200, `{"pods": []}`), "limit"},
		"accepted without key":   {exchange("GET", "/v1/vms", 200, `{"vms": []}`, "Authorization", ""), "security"},
	} {
		err := CheckExchange(tc.ex)
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: refused for another reason (want %q): %v", name, tc.want, err)
		}
	}
}
