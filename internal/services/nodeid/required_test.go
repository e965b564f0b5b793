package nodeid_test

import (
	"fmt"
	"strings"
	"testing"

	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/services"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// sharedFixture: two organizations on one shared node. Acme (org-a) runs
// vm-a-run on dgx-shared, holding GPU s0 and 16 cores, 256 GB and 1000 GB
// of its host; vm-a-stopped (1 GPU, 512 GB) does not fit the 256 GB left;
// vm-a-moved lost its removed node and needs 4 H100s, which no node has
// free. Beta (org-b) holds a nodes.report key (b-agent) and runs vm-b-run
// on the same node, holding GPU s1.
const sharedFixture = `{
 "gpuModels": [{"id": "h100", "name": "NVIDIA H100 80GB HBM3", "manufacturer": "NVIDIA", "memoryGb": 80}],
 "organizations": [{"id": "org-a", "name": "Acme", "tenantId": 9201}, {"id": "org-b", "name": "Beta", "tenantId": 9202}],
 "apiKeys": [{"token": "a-operator", "organizationId": "org-a", "permissions": ["compute.operate"]},
             {"token": "b-agent", "organizationId": "org-b", "permissions": ["nodes.report"]},
             {"token": "b-operator", "organizationId": "org-b", "permissions": ["compute.operate"]}],
 "nodes": [
  {"id": "n-shared", "name": "dgx-shared", "clusterId": "c1", "status": "online", "agentVersion": "2.6.1", "cpuCores": 64, "ramGb": 512, "diskGb": 4000,
   "gpus": [{"id": "s0", "index": 0, "uuid": "GPU-s0", "modelId": "h100"}, {"id": "s1", "index": 1, "uuid": "GPU-s1", "modelId": "h100"},
            {"id": "s2", "index": 2, "uuid": "GPU-s2", "modelId": "h100"}, {"id": "s3", "index": 3, "uuid": "GPU-s3", "modelId": "h100"}]},
  {"id": "n-gone", "name": "dgx-gone", "clusterId": "c1", "status": "removed", "agentVersion": "2.6.1", "cpuCores": 64, "ramGb": 512, "diskGb": 4000,
   "gpus": [{"id": "x0", "index": 0, "uuid": "GPU-x0", "modelId": "h100"}]}],
 "vms": [
  {"id": "vm-a-run", "name": "train", "organizationId": "org-a", "nodeId": "n-shared", "status": "running", "createdAt": "2026-01-01T00:00:00Z",
   "gpuModelId": "h100", "gpuCount": 1, "gpuIds": ["s0"], "cpuCores": 16, "ramGb": 256, "diskSizeGb": 1000},
  {"id": "vm-a-stopped", "name": "big", "organizationId": "org-a", "nodeId": "n-shared", "status": "stopped", "statusReason": "user_stopped", "createdAt": "2026-01-01T00:00:00Z",
   "gpuModelId": "h100", "gpuCount": 1, "gpuIds": [], "cpuCores": 16, "ramGb": 512, "diskSizeGb": 100},
  {"id": "vm-a-moved", "name": "wide", "organizationId": "org-a", "nodeId": "n-gone", "status": "stopped", "statusReason": "node_removed", "createdAt": "2026-01-01T00:00:00Z",
   "gpuModelId": "h100", "gpuCount": 4, "gpuIds": [], "cpuCores": 16, "ramGb": 64, "diskSizeGb": 100},
  {"id": "pod-b-run", "name": "notebook", "organizationId": "org-b", "nodeId": "n-shared", "status": "running", "capabilityTier": "pod", "createdAt": "2026-01-01T00:00:00Z",
   "gpuModelId": "h100", "gpuCount": 1, "gpuIds": ["s1"], "volumeGb": 10}]
}`

// sharedInventory is dgx-shared's whole inventory as a key would send it.
func sharedInventory() agentapi.InventoryRequest {
	inv := agentapi.InventoryRequest{NodeName: "dgx-shared", ClusterID: "c1", AgentVersion: "2.6.1", CPUCores: 64, RAMGb: 512, DiskGb: 4000}
	for i := range 4 {
		inv.GPUs = append(inv.GPUs, agentapi.InventoryGPU{Index: i, UUID: fmt.Sprintf("GPU-s%d", i), Name: "NVIDIA H100 80GB HBM3", Health: "healthy"})
	}
	return inv
}

// The attacks of one organization's nodes.report key on shared nodes,
// against a server started as by default: each is refused with 403
// NODE_CREDENTIAL_REQUIRED saying how to get a credential, and nothing of
// it happens.
func TestNodeReportKeysRefusedByDefault(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, sharedFixture) // servertest.Config{}: what New serves unless told otherwise
		restart := func(id string) (int, string) {
			return servertest.Post(t, env, "/v1/vms/"+id+"/restart", "a-operator", []byte(`{}`))
		}
		failGPU := agentapi.HeartbeatRequest{NodeName: "dgx-shared", AgentVersion: "2.6.1",
			GPUs: []agentapi.HeartbeatGPU{{UUID: "GPU-s0", Health: "failed", FailedReason: "XID 79"}}}
		stopWorkload := agentapi.HeartbeatRequest{NodeName: "dgx-shared", AgentVersion: "2.6.1",
			Workloads: []agentapi.WorkloadReport{{ID: "vm-a-run", Generation: 0, State: agentapi.StateExited}}}
		rogue := agentapi.InventoryRequest{NodeName: "rogue-1", ClusterID: "c1", AgentVersion: "2.6.1", CPUCores: 256, RAMGb: 4096, DiskGb: 30000}
		for i := range 8 {
			rogue.GPUs = append(rogue.GPUs, agentapi.InventoryGPU{Index: i, UUID: fmt.Sprintf("GPU-fake-%d", i), Name: "NVIDIA H100 80GB HBM3", Health: "healthy"})
		}
		inflated := sharedInventory()
		inflated.RAMGb = 4096
		shrunk := sharedInventory()
		shrunk.GPUs = shrunk.GPUs[1:]

		for _, a := range []struct {
			name, path string
			body       any
			// after checks that nothing of the attack happened.
			after func(t *testing.T)
		}{
			{"fail a GPU another organization's VM holds", agentapi.HeartbeatPath, failGPU, func(t *testing.T) {
				var health []string
				storetest.Scan(t, st, &health, "SELECT health FROM gpus WHERE id = ?", "s0")
				if len(health) != 1 || health[0] != string(models.GPUHealthy) {
					t.Errorf("GPU s0 is %v", health)
				}
				if s, b := restart("vm-a-run"); s != 200 {
					t.Errorf("restarting vm-a-run after the attack: %d %s", s, b)
				}
			}},
			{"stop another organization's running workload", agentapi.HeartbeatPath, stopWorkload, func(t *testing.T) {
				if vm := servertest.ReadVM(t, st, "vm-a-run"); vm.Status != models.VMRunning {
					t.Errorf("vm-a-run is %s (%s)", vm.Status, vm.StatusReason)
				}
			}},
			{"register a rogue node with fake GPUs", agentapi.InventoryPath, rogue, func(t *testing.T) {
				n := storetest.Count(t, st, "nodes", "name = ?", "rogue-1")
				if n != 0 {
					t.Errorf("the rogue node was registered")
				}
				s, b := restart("vm-a-moved")
				servertest.Expect(t, "restarting vm-a-moved after the attack", s, b, 503, "VM_NO_CAPACITY")
			}},
			{"inflate a node's RAM", agentapi.InventoryPath, inflated, func(t *testing.T) {
				if n := nodeRow(t, st, "n-shared"); n.RAMGb != 512 {
					t.Errorf("dgx-shared has %d GB of RAM", n.RAMGb)
				}
				s, b := restart("vm-a-stopped")
				servertest.Expect(t, "restarting vm-a-stopped after the attack", s, b, 503, "too little free RAM")
			}},
			{"read the node's VMs and GPU holdings from a heartbeat answer", agentapi.HeartbeatPath,
				agentapi.HeartbeatRequest{NodeName: "dgx-shared", AgentVersion: "2.6.1"}, nil},
			{"read GPU holders from a refused inventory", agentapi.InventoryPath, shrunk, nil},
		} {
			t.Run(a.name, func(t *testing.T) {
				s, b := servertest.Post(t, env, a.path, "b-agent", a.body)
				if s != 403 || b != servertest.CredentialRequired {
					t.Errorf("got %d %s\nwant 403 %s", s, b, servertest.CredentialRequired)
				}
				if strings.Contains(b, "vm-") || strings.Contains(b, "GPU-s") {
					t.Errorf("the refusal names a VM or GPU: %s", b)
				}
				if a.after != nil {
					a.after(t)
				}
			})
		}
		// Nothing any of them sent was recorded as the node's report.
		if n := nodeRow(t, st, "n-shared"); n.LastHeartbeatAt != nil || n.CPUCores != 64 {
			t.Errorf("dgx-shared after the attacks: %+v", n)
		}
	})
}

// With two organizations' workloads on one node, what the agent paths
// answer names only what the node itself runs: its assignments (ids,
// generations, GPU UUIDs), never an organization, and a refusal never
// names which workload holds a GPU. The same with a node credential and
// with a key in legacy mode.
func TestReportAnswersNameOnlyTheNodesOwn(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		t.Run(fmt.Sprintf("legacy=%v", legacy), func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, db *store.Store) {
				env := servertest.NewWithOptions(t, db, sharedFixture, servertest.Options{Services: services.Config{NodeReportKeys: legacy}}, servertest.Config{})
				token := "b-agent"
				if !legacy {
					token = servertest.NodeCredential(t, db, "dgx-shared", "c1")
				}
				seq := int64(0)
				send := func(path string, body any) (int, string) {
					seq++
					switch v := body.(type) {
					case agentapi.HeartbeatRequest:
						v.Sequence = seq
						body = v
					case agentapi.InventoryRequest:
						v.Sequence = seq
						body = v
					}
					return servertest.Post(t, env, path, token, body)
				}
				// Beta's pod, interrupted, still holds GPU s1: it is not an
				// assignment, and nothing names it.
				storetest.Exec(t, db, "UPDATE vms SET status = ? WHERE id = ?", models.VMInterrupted, "pod-b-run")
				const want = `{"nodeId":"n-shared","status":"online","workloads":[{"id":"vm-a-run","generation":0,"gpus":["GPU-s0"],` +
					`"kind":"vm","gpuIndexes":[0],"cpuCores":16,"ramGb":256,"diskSizeGb":1000,"volume":{"id":"vol-vm-a-run-0","sizeGb":1000},"action":"run"}]}`
				s, b := send(agentapi.HeartbeatPath, agentapi.HeartbeatRequest{NodeName: "dgx-shared", AgentVersion: "2.6.1"})
				if s != 200 || b != want {
					t.Errorf("heartbeat: %d %s\nwant 200 %s", s, b, want)
				}
				s, b = send(agentapi.InventoryPath, sharedInventory())
				if s != 200 || b != want {
					t.Errorf("inventory: %d %s\nwant 200 %s", s, b, want)
				}
				// A workload report about a row of another node or an unknown
				// id answers as one about nothing.
				s, b = send(agentapi.HeartbeatPath, agentapi.HeartbeatRequest{NodeName: "dgx-shared", AgentVersion: "2.6.1",
					Workloads: []agentapi.WorkloadReport{{ID: "vm-a-moved", State: agentapi.StateRunning}, {ID: "vm-nope", State: agentapi.StateRunning}}})
				if s != 200 || b != want {
					t.Errorf("heartbeat with reports of other rows: %d %s\nwant 200 %s", s, b, want)
				}
				shrunk := sharedInventory()
				shrunk.GPUs = shrunk.GPUs[3:]
				shrunk.RAMGb = 128
				s, b = send(agentapi.InventoryPath, shrunk)
				const refused = `{"error":{"code":"INVENTORY_SHRINKS_HELD","message":"the inventory of node dgx-shared would take what its workloads hold: ` +
					`ramGb 128 is below the 256 its VMs hold; GPU GPU-s0 (index 0), which a workload holds, is missing from it; ` +
					`GPU GPU-s1 (index 1), which a workload holds, is missing from it; nothing of this inventory was applied: an operator must stop or move those workloads first","requestId":"servertest"}}`
				if s != 409 || b != refused {
					t.Errorf("shrinking inventory: %d %s\nwant 409 %s", s, b, refused)
				}
			})
		})
	}
}
