package nodes

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/services/compute"
	"gpugraph/internal/services/nodeid"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// service is the reports service over st, as services.New builds it.
func service(st *store.Store) *Service {
	return New(st, compute.New(st), nodeid.New(st), Options{})
}

func node(t *testing.T, st *store.Store, id string) models.Node {
	t.Helper()
	var n models.Node
	storetest.Take(t, st, &n, "nodes", "id = ?", id)
	return n
}

func vm(t *testing.T, st *store.Store, id string) models.VM {
	t.Helper()
	var v models.VM
	storetest.Take(t, st, &v, "vms", "id = ?", id)
	return v
}

// gpuRows lists a node's GPUs as "idx:id:uuid:health:reason:holder" by index.
func gpuRows(t *testing.T, st *store.Store, nodeID string) string {
	t.Helper()
	var gs []models.GPU
	storetest.Scan(t, st, &gs, "SELECT * FROM gpus WHERE node_id = ? ORDER BY idx", nodeID)
	var out []string
	for _, g := range gs {
		reason, holder := "", ""
		if g.FailedReason != nil {
			reason = *g.FailedReason
		}
		if g.HolderVMID != nil {
			holder = *g.HolderVMID
		}
		out = append(out, fmt.Sprintf("%d:%s:%s:%s:%s:%s", g.Index, g.ID, g.UUID, g.Health, reason, holder))
	}
	return strings.Join(out, " ")
}

func h100(index int, uuid string) inventoryGPU {
	return inventoryGPU{Index: index, UUID: uuid, Address: fmt.Sprintf("0000:%02X:00.0", 0x1B+index),
		Name: "NVIDIA H100 80GB HBM3", MemoryBytes: 81559 << 20, Health: models.GPUHealthy}
}

func TestInventoryRegistersNewNode(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		failed := h100(1, "GPU-b")
		failed.Health, failed.FailedReason = models.GPUFailed, "XID 79"
		amd := inventoryGPU{Index: 2, UUID: "GPU-c", Address: "0000:9D:00.0", Name: "AMD Instinct MI300X",
			MemoryBytes: 192 << 30, Health: models.GPUHealthy}
		inv := inventory{NodeName: "dgx-01", ClusterID: "c1", AgentVersion: "2.6.1", CPUCores: 224, RAMGb: 2048, DiskGb: 27939,
			GPUs: []inventoryGPU{h100(0, "GPU-a"), failed, amd}}
		rep, err := service(st).register(ctx, inv, t0)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(rep, outcome{NodeID: "dgx-01", Status: models.NodeOnline, Created: true, AgentVersion: "2.6.1"}) {
			t.Fatalf("report = %+v", rep)
		}
		n := node(t, st, "dgx-01")
		if n.Name != "dgx-01" || n.ClusterID != "c1" || n.NodePool != "default" || n.Status != models.NodeOnline || n.AgentVersion != "2.6.1" ||
			n.CPUCores != 224 || n.RAMGb != 2048 || n.DiskGb != 27939 || n.FabricID != nil || n.LastHeartbeatAt == nil || !n.LastHeartbeatAt.Equal(t0) {
			t.Fatalf("node = %+v", n)
		}
		want := "0:GPU-a:GPU-a:healthy:: 1:GPU-b:GPU-b:failed:XID 79: 2:GPU-c:GPU-c:healthy::"
		if got := gpuRows(t, st, "dgx-01"); got != want {
			t.Fatalf("gpus\n got %s\nwant %s", got, want)
		}
		var ms []models.GPUModel
		storetest.Scan(t, st, &ms, "SELECT * FROM gpu_models ORDER BY id")
		if fmt.Sprint(ms) != "[{amd-instinct-mi300x AMD Instinct MI300X AMD 192} {nvidia-h100-80gb-hbm3 NVIDIA H100 80GB HBM3 NVIDIA 80}]" {
			t.Fatalf("models = %v", ms)
		}
		var g models.GPU
		storetest.Take(t, st, &g, "gpus", "id = ?", "GPU-c")
		if g.ModelID != "amd-instinct-mi300x" || g.Address != "0000:9D:00.0" {
			t.Fatalf("gpu = %+v", g)
		}

		// The same inventory again matches by name and adds nothing.
		rep, err = service(st).register(ctx, inv, t0.Add(time.Minute))
		if err != nil || !reflect.DeepEqual(rep, outcome{NodeID: "dgx-01", Status: models.NodeOnline, AgentVersion: "2.6.1"}) {
			t.Fatalf("again: %+v %v", rep, err)
		}
		if got := gpuRows(t, st, "dgx-01"); got != want {
			t.Fatalf("gpus after the same inventory: %s", got)
		}
		count := storetest.Count(t, st, "gpu_models", "")
		if count != 2 {
			t.Fatalf("%d models", count)
		}
	})
}

const reconcileFixture = `{
 "gpuModels": [{"id": "h100", "name": "NVIDIA H100 80GB HBM3", "manufacturer": "NVIDIA", "memoryGb": 80}],
 "organizations": [{"id": "o", "name": "O", "tenantId": 1}],
 "nodes": [
  {"id": "n1", "name": "dgx-01", "clusterId": "c1", "status": "offline", "agentVersion": "2.4.0", "cpuCores": 100, "ramGb": 1000, "diskGb": 5000,
   "lastHeartbeatAt": "2025-03-01T11:00:00Z",
   "gpus": [
    {"id": "g0", "index": 0, "uuid": "GPU-a", "address": "0000:18:00.0", "modelId": "h100"},
    {"id": "g1", "index": 1, "uuid": "GPU-b", "address": "0000:2A:00.0", "modelId": "h100"},
    {"id": "g2", "index": 2, "uuid": "GPU-c", "address": "0000:3A:00.0", "modelId": "h100", "health": "failed", "failedReason": "XID 48"},
    {"id": "g3", "index": 3, "address": "0000:5D:00.0", "modelId": "h100"},
    {"id": "g5", "index": 5, "uuid": "GPU-f", "address": "0000:9A:00.0", "modelId": "h100"}]},
  {"id": "dgx-02", "name": "other", "status": "online", "gpus": [
    {"id": "GPU-new", "index": 0, "uuid": "GPU-z", "modelId": "h100"}]},
  {"id": "gone", "name": "gone", "status": "removed", "cpuCores": 8, "gpus": []}],
 "vms": [
  {"id": "vm1", "name": "a", "organizationId": "o", "nodeId": "n1", "status": "interrupted", "statusReason": "node_lost",
   "interruptedAt": "2025-03-01T11:01:00Z", "gpuModelId": "h100", "gpuCount": 1, "gpuIds": ["g0"]},
  {"id": "vm2", "name": "b", "organizationId": "o", "nodeId": "n1", "status": "interrupted", "statusReason": "spot_preempted_for_reservation_tenant",
   "interruptedAt": "2025-03-01T11:01:00Z", "gpuModelId": "h100", "gpuCount": 1, "gpuIds": ["g3"]},
  {"id": "vm3", "name": "c", "organizationId": "o", "nodeId": "gone", "status": "interrupted", "statusReason": "node_lost"}]
}`

func TestInventoryReconcilesKnownNode(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		datasettest.Load(t, st, reconcileFixture)
		// GPU-a stays at 0; GPU-c moves to 1 and is reported healthy; the
		// UUID-less row at 3 is GPU-d; GPU-e is new at 2; GPU-b vanished and
		// its index went to GPU-c; GPU-f vanished and keeps its free index.
		// (A held GPU may not vanish: TestInventoryMayNotShrinkHeld.)
		c := h100(1, "GPU-c")
		e := h100(2, "GPU-e")
		e.Health, e.FailedReason = models.GPUFailed, ""
		inv := inventory{NodeName: "dgx-01", AgentVersion: "2.6.1", CPUCores: 224,
			GPUs: []inventoryGPU{h100(0, "GPU-a"), c, e, h100(3, "GPU-d")}}
		rep, err := service(st).register(ctx, inv, t0)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(rep, outcome{NodeID: "n1", Status: models.NodeOnline, Resumed: 1, AgentVersion: "2.6.1"}) {
			t.Fatalf("report = %+v", rep)
		}
		want := "0:g0:GPU-a:healthy::vm1 1:g2:GPU-c:failed:XID 48: 2:GPU-e:GPU-e:failed:reported failed by the node agent: " +
			"3:g3:GPU-d:healthy::vm2 5:g5:GPU-f:failed:vanished from inventory: 6:g1:GPU-b:failed:vanished from inventory:"
		if got := gpuRows(t, st, "n1"); got != want {
			t.Fatalf("gpus\n got %s\nwant %s", got, want)
		}
		var g models.GPU
		storetest.Take(t, st, &g, "gpus", "id = ?", "g2")
		if g.Address != "0000:1C:00.0" || g.ModelID != "h100" {
			t.Errorf("moved GPU = %+v", g)
		}
		storetest.Take(t, st, &g, "gpus", "id = ?", "GPU-e")
		if g.ModelID != "h100" {
			t.Errorf("a new GPU of a known name takes the catalog entry of that name: %q", g.ModelID)
		}
		// An empty cluster and zero figures leave what was known.
		n := node(t, st, "n1")
		if n.Status != models.NodeOnline || n.ClusterID != "c1" || n.AgentVersion != "2.6.1" || n.CPUCores != 224 || n.RAMGb != 1000 ||
			n.DiskGb != 5000 || !n.LastHeartbeatAt.Equal(t0) {
			t.Errorf("node = %+v", n)
		}
		// Only node_lost interruptions resume.
		if v := vm(t, st, "vm1"); v.Status != models.VMRunning || v.StatusReason != "" || v.InterruptedAt != nil || !v.UpdatedAt.Equal(t0) {
			t.Errorf("vm1 = %+v", v)
		}
		if v := vm(t, st, "vm2"); v.Status != models.VMInterrupted {
			t.Errorf("vm2 = %+v", v)
		}

		// A node named like another's id gets a suffixed id; a UUID
		// another node holds is refused, and nothing of it is written.
		rep, err = service(st).register(ctx, inventory{NodeName: "dgx-02", AgentVersion: "2.6.1",
			GPUs: []inventoryGPU{h100(0, "GPU-new")}}, t0)
		if err != nil || !strings.HasPrefix(rep.NodeID, "dgx-02-") || len(rep.NodeID) != len("dgx-02-")+6 || !rep.Created {
			t.Fatalf("suffixed id: %+v %v", rep, err)
		}
		// GPU-new is the id of a GPU of another node, so this one is not.
		if got := gpuRows(t, st, rep.NodeID); !strings.HasPrefix(got, "0:gpu-") || !strings.HasSuffix(got, ":GPU-new:healthy::") {
			t.Errorf("gpu with a taken id: %s", got)
		}
		_, err = service(st).register(ctx, inventory{NodeName: "dgx-03", AgentVersion: "2.6.1",
			GPUs: []inventoryGPU{h100(0, "GPU-z")}}, t0)
		datasettest.WantError(t, err, 409, CodeGPUOnOtherNode,
			`GPU GPU-z is registered on node "other"; an operator must remove it there before this node can report it`)
		count := storetest.Count(t, st, "nodes", "name = ?", "dgx-03")
		if count != 0 {
			t.Error("a refused inventory registered its node")
		}

		// A removed node records the report but stays removed, and
		// nothing on it resumes.
		rep, err = service(st).register(ctx, inventory{NodeName: "gone", AgentVersion: "2.6.1"}, t0)
		if err != nil || rep.Status != models.NodeRemoved || rep.Resumed != 0 {
			t.Fatalf("removed: %+v %v", rep, err)
		}
		if v := vm(t, st, "vm3"); v.Status != models.VMInterrupted {
			t.Errorf("vm3 on a removed node = %s", v.Status)
		}
	})
}

// Two inventories of one new node at once, as two replicas would take
// them: one registers it, the other finds it; one row, eight GPUs.
func TestConcurrentRegistration(t *testing.T) {
	for _, d := range storetest.Engines() {
		t.Run(string(d), func(t *testing.T) {
			replicas := storetest.Replicas(t, d, 4)
			var gpus []inventoryGPU
			for i := range 8 {
				gpus = append(gpus, h100(i, fmt.Sprintf("GPU-%d", i)))
			}
			errs := make(chan error, len(replicas))
			created := make(chan bool, len(replicas))
			for _, st := range replicas {
				go func() {
					rep, err := service(st).register(context.Background(), inventory{NodeName: "dgx-01", AgentVersion: "2.6.1", GPUs: gpus}, t0)
					created <- rep.Created
					errs <- err
				}()
			}
			n := 0
			for range replicas {
				if err := <-errs; err != nil {
					t.Fatal(err)
				}
				if <-created {
					n++
				}
			}
			var nodes, gpuCount, modelCount int64
			st := replicas[0]
			nodes = storetest.Count(t, st, "nodes", "")
			gpuCount = storetest.Count(t, st, "gpus", "")
			modelCount = storetest.Count(t, st, "gpu_models", "")
			if n != 1 || nodes != 1 || gpuCount != 8 || modelCount != 1 {
				t.Fatalf("created %d times; %d nodes, %d gpus, %d models", n, nodes, gpuCount, modelCount)
			}
		})
	}
}

// An inventory may not move a node that holds workloads to another
// cluster; refused, nothing written. (HTTP tests cover the figures and
// GPUs: nodeid's TestInventoryMayNotShrinkHeld.)
func TestInventoryMayNotMoveHeld(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		datasettest.Load(t, st, reconcileFixture)
		inv := inventory{NodeName: "dgx-01", ClusterID: "c2", AgentVersion: "2.6.1",
			GPUs: []inventoryGPU{h100(0, "GPU-a"), h100(1, "GPU-b"), h100(2, "GPU-c"), h100(3, "GPU-d"), h100(5, "GPU-f")}}
		_, err := service(st).register(ctx, inv, t0)
		datasettest.WantError(t, err, 409, CodeInventoryShrinksHeld,
			`the inventory of node dgx-01 would take what its workloads hold: clusterId "c2" would move it out of cluster "c1" while 2 workloads are placed on it; `+
				"nothing of this inventory was applied: an operator must stop or move those workloads first")
		if n := node(t, st, "n1"); n.ClusterID != "c1" || n.AgentVersion != "2.4.0" {
			t.Errorf("a refused inventory was applied: %+v", n)
		}
		inv.ClusterID = "c1"
		if _, err := service(st).register(ctx, inv, t0); err != nil {
			t.Fatalf("the same inventory in its own cluster: %v", err)
		}
	})
}

// A catalog id, manufacturer and memory size derived from what NVML says.
func TestCatalogEntryOfAProductName(t *testing.T) {
	for name, want := range map[string]string{
		"NVIDIA H100 80GB HBM3": "nvidia-h100-80gb-hbm3",
		"AMD Instinct MI300X":   "amd-instinct-mi300x",
		"  --GH200 (480GB)":     "gh200-480gb",
		"":                      "unknown",
		"!!!":                   "unknown",
	} {
		if got := modelID(name); got != want {
			t.Errorf("modelID(%q) = %q, want %q", name, got, want)
		}
	}
	for name, want := range map[string]models.Manufacturer{
		"NVIDIA H100 80GB HBM3": models.NVIDIA, "AMD Instinct MI300X": models.AMD, "Radeon Pro W7900": models.AMD, "": models.NVIDIA,
	} {
		if got := manufacturerOf(name); got != want {
			t.Errorf("manufacturerOf(%q) = %s, want %s", name, got, want)
		}
	}
	if got := memoryGb(81559 << 20); got != 80 {
		t.Errorf("memoryGb(81559 MiB) = %d, want 80", got)
	}
}
