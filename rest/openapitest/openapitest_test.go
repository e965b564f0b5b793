package openapitest

import (
	"fmt"
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
