package clusterbatch_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"gpugraph/apierr"
	"gpugraph/clusterbatch"
)

// podWith is a delta of one pod whose resources are set as the JSON
// members given (a valid pod otherwise).
func podWith(members string) []byte {
	pod := `{"id": "p", "name": "p", "workloadId": "w", "clusterId": "c", "createdAt": "2026-01-01T00:00:00Z",
	 "k8sPhaseUpdatedAt": "2026-01-01T00:00:00Z", "k8sPhase": "Running", "containers": []` + members + `}`
	return []byte(`{"sequence": 1, "kind": "delta", "pods": [` + pod + `]}`)
}

// The server checks every resource quantity a connector sends: the error
// names the field and says what a good one looks like.
func TestResourceQuantities(t *testing.T) {
	cases := []struct{ name, members, want string }{
		{"good", `, "requestedResources": {"gpuRequestType": "portion", "gpu": {"request": 0.5, "limit": null},
		  "cpu": {"request": 0.25, "limit": 2}, "cpuMemory": {"request": "512Mi", "limit": "1Gi"}, "gpuMemory": {"request": "4000Mi", "limit": null},
		  "extendedResources": [{"resource": "example.com/fpga", "quantity": "2", "exclude": null}]},
		  "allocatedResources": {"gpu": 0.5, "cpu": 0.25, "cpuMemory": "512Mi", "gpuMemory": null, "extendedResources": null}`, ""},
		{"absent", `, "requestedResources": null, "allocatedResources": null`, ""},
		{"memory not a quantity", `, "requestedResources": {"cpuMemory": {"request": "lots"}}`,
			`pods[0].requestedResources.cpuMemory.request "lots" is not a quantity as Run:ai writes one`},
		{"memory a pattern Kubernetes refuses", `, "requestedResources": {"cpuMemory": {"limit": "1.2.3"}}`,
			`pods[0].requestedResources.cpuMemory.limit "1.2.3" is not a Kubernetes quantity`},
		{"negative memory", `, "allocatedResources": {"cpuMemory": "-1Gi"}`, `pods[0].allocatedResources.cpuMemory "-1Gi" must not be negative`},
		{"memory request over limit", `, "requestedResources": {"cpuMemory": {"request": "2Gi", "limit": "1Gi"}}`,
			`pods[0].requestedResources.cpuMemory.request 2Gi is more than its limit 1Gi`},
		{"negative cpu", `, "requestedResources": {"cpu": {"request": -1}}`, `pods[0].requestedResources.cpu.request -1 must be between 0 and 1.048576e+06`},
		{"gpu over the bound", `, "allocatedResources": {"gpu": 5000}`, `pods[0].allocatedResources.gpu 5000 must be between 0 and 1024`},
		{"gpu request over limit", `, "requestedResources": {"gpu": {"request": 2, "limit": 1}}`, `pods[0].requestedResources.gpu.request 2 is more than its limit 1`},
		{"unknown request type", `, "requestedResources": {"gpuRequestType": "slice"}`, `pods[0].requestedResources.gpuRequestType "slice" must be "portion", "memory" or absent`},
		{"extended without a name", `, "requestedResources": {"extendedResources": [{"quantity": "1"}]}`,
			`pods[0].requestedResources.extendedResources[0].resource is required`},
		{"extended quantity", `, "allocatedResources": {"extendedResources": [{"resource": "example.com/x", "quantity": "2 units"}]}`,
			`pods[0].allocatedResources.extendedResources[0].quantity "2 units" is not a quantity`},
		{"node pool empty", `, "requestedNodePools": [""]`, `pods[0].requestedNodePools[0] is required`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := clusterbatch.Parse(podWith(c.members))
			if c.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if out, _ := json.Marshal(b.Pods[0].RequestedResources); c.name == "good" && !strings.Contains(string(out), `"gpuMemory":{"limit":null,"request":"4000Mi"}`) {
					t.Errorf("read back as %s", out)
				}
				return
			}
			var e *apierr.Error
			if !errors.As(err, &e) || e.Status != http.StatusBadRequest || !strings.HasPrefix(e.Message, c.want) {
				t.Fatalf("got %v, want a 400 starting %q", err, c.want)
			}
		})
	}
}
