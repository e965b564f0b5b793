package demo_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"gpugraph/demo"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// Every restart outcome the demo README promises answers as promised.
func TestDemoRestartOutcomes(t *testing.T) {
	b, err := demo.JSON(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"vm-restart-ok-running": "200 running", "vm-restart-ok-running-pod": "200 running",
		"vm-restart-ok-stopped": "200 deploying", "vm-restart-ok-failed": "200 deploying",
		"vm-restart-ok-pod-stopped": "200 deploying", "vm-restart-ok-pod-failed": "200 deploying",
		"vm-interrupted-resumes": "200 running", "vm-node-removed": "200 deploying",
		"vm-node-removed-no-capacity": "503 VM_NO_CAPACITY", "vm-globex-sdxl-h100": "404 VM_NOT_FOUND",
		"vm-serving-readonly": "403 VM_READ_ONLY", "vm-terminated": "409 VM_TERMINATED",
		"vm-pending": "409 VM_NOT_READY", "vm-deploying": "409 VM_NOT_READY",
		"vm-pod-stopping": "409 POD_STOPPING", "vm-node-offline": "409 VM_NODE_OFFLINE",
		"vm-interrupted": "409 VM_NODE_OFFLINE", "vm-pod-node-offline": "409 POD_NODE_OFFLINE",
		"vm-no-infiniband": "409 POD_NODE_NO_INFINIBAND", "vm-no-amd-grant": "409 POD_NODE_NO_AMD_GRANT",
		"vm-busy-failed-gpu": "503 VM_NODE_BUSY", "vm-busy-failed-gpu-pod": "503 POD_NODE_BUSY",
		"vm-busy-no-free-gpus": "503 VM_NODE_BUSY", "vm-busy-host-resources": "503 VM_NODE_BUSY",
		"vm-no-ip-capacity": "503 INSUFFICIENT_IP_CAPACITY",
	}
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, string(b))
		for id, outcome := range want {
			status, body := env.Do("POST", "/v1/vms/"+id+"/restart", "acme-operator", nil, nil)
			var got struct {
				Status string
				Error  struct{ Code string }
			}
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatalf("%s: %s", id, body)
			}
			word := got.Status
			if status != 200 {
				word = got.Error.Code
			}
			if g := strings.Join([]string{itoa(status), word}, " "); g != outcome {
				t.Errorf("%s: %s, want %s (%s)", id, g, outcome, body)
			}
		}
	})
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
