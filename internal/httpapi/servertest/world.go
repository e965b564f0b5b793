package servertest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/auth"
	"gpugraph/internal/dataset"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// The world the compute tests build their cases on (the restart contract's,
// the operations', the live feed's): two GPU models, one InfiniBand fabric with room
// for two addresses, and nodes that each stand for one row of the restart contract (docs/contract.md).
//
//	n1 gpu-node-1  online   2.6.1  ib-1  8 H100 (GPU 7 0000:DB:00.0 failed, XID 79)  128 cores 2048 GB RAM 30000 GB disk
//	n2 gpu-node-2  offline  2.6.1  —     4 H100
//	n3 gpu-node-3  online   2.3.9  ib-1  4 H100 (agent predates InfiniBand)
//	n4 gpu-node-4  online   2.5.3  —     4 MI300X (agent predates AMD grants)
//	n5 gpu-node-5  removed  2.6.1  —     4 H100
//	n6 gpu-node-6  online   2.6.1  —     4 H100  32 cores 256 GB RAM 1000 GB disk
//
// org-acme is InfiniBand-enabled, org-globex is not.
const (
	H100   = "h100-80gb" // the world's NVIDIA GPU model
	MI300X = "mi300x"    // the world's AMD GPU model
)

// World returns a fresh copy of the world; tests add VMs and change it.
func World() *dataset.File {
	f := &dataset.File{
		GPUModels: []models.GPUModel{
			{ID: H100, Name: "NVIDIA H100 80GB HBM3", Manufacturer: models.NVIDIA, MemoryGb: 80},
			{ID: MI300X, Name: "AMD Instinct MI300X", Manufacturer: models.AMD, MemoryGb: 192},
		},
		Fabrics: []models.Fabric{{ID: "ib-1", IPCapacity: 2}},
		Organizations: []models.Organization{
			{ID: "org-acme", Name: "Acme", TenantID: 1001, InfinibandEnabled: true},
			{ID: "org-globex", Name: "Globex", TenantID: 1002},
		},
		APIKeys: []dataset.APIKey{
			{Token: "acme-operator", OrganizationID: "org-acme", Permissions: []string{"compute.operate"}},
			{Token: "acme-reader", OrganizationID: "org-acme", Permissions: []string{"compute.read"}},
			{Token: "globex-operator", OrganizationID: "org-globex", Permissions: []string{"compute.operate"}},
		},
	}
	AddNode(f, "n1", "online", "2.6.1", "ib-1", 128, 2048, 30000, H100, 8)
	AddNode(f, "n2", "offline", "2.6.1", "", 64, 1024, 10000, H100, 4)
	AddNode(f, "n3", "online", "2.3.9", "ib-1", 64, 1024, 10000, H100, 4)
	AddNode(f, "n4", "online", "2.5.3", "", 64, 1024, 10000, MI300X, 4)
	AddNode(f, "n5", "removed", "2.6.1", "", 64, 1024, 10000, H100, 4)
	AddNode(f, "n6", "online", "2.6.1", "", 32, 256, 1000, H100, 4)
	FailGPU(f, "n1-g7", "XID 79")
	return f
}

// pciAddress gives GPU i the bus ids of a DGX H100.
var pciAddress = []string{"0000:18:00.0", "0000:2A:00.0", "0000:3A:00.0", "0000:5D:00.0",
	"0000:9A:00.0", "0000:AB:00.0", "0000:BA:00.0", "0000:DB:00.0"}

// AddNode adds node id (gpu-node-<n>) of cluster c1 with its host figures
// and gpus healthy GPUs of model, on fabric when it is not "".
func AddNode(f *dataset.File, id, status, agent, fabric string, cpu, ram, disk int, model string, gpus int) {
	n := dataset.Node{Node: models.Node{ID: id, Name: "gpu-node-" + id[1:], ClusterID: "c1", NodePool: "default",
		Status: models.NodeStatus(status), AgentVersion: agent, CPUCores: cpu, RAMGb: ram, DiskGb: disk}}
	if fabric != "" {
		n.FabricID = new(fabric)
	}
	for i := range gpus {
		n.GPUs = append(n.GPUs, models.GPU{ID: fmt.Sprintf("%s-g%d", id, i), Index: i,
			UUID: fmt.Sprintf("GPU-%s-%04d", id, i), Address: pciAddress[i], ModelID: model, Health: models.GPUHealthy})
	}
	f.Nodes = append(f.Nodes, n)
}

// FailGPU marks GPU id failed for reason.
func FailGPU(f *dataset.File, id, reason string) {
	for i := range f.Nodes {
		for j := range f.Nodes[i].GPUs {
			if g := &f.Nodes[i].GPUs[j]; g.ID == id {
				g.Health, g.FailedReason = models.GPUFailed, new(reason)
				return
			}
		}
	}
	panic("no GPU " + id)
}

// Created is when the world's VMs were created.
var Created = time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)

// VMSpec is a VM or pod to add to the world (AddVM).
type VMSpec struct {
	ID, Org, Node, Status, Reason string // Org "" for org-acme
	Pod                           bool
	Model                         string // "" for CPU-only
	GPUs                          int
	Held                          []string // the GPUs it holds
	CPU, RAM, Disk                int
	TearingDown                   bool
	ManagedBy                     string
}

// AddVM adds the VM or pod s to f.
func AddVM(f *dataset.File, s VMSpec) {
	if s.Org == "" {
		s.Org = "org-acme"
	}
	v := dataset.VM{VM: models.VM{
		ID: s.ID, Name: s.ID + "-name", OrganizationID: s.Org, Status: models.VMStatus(s.Status), StatusReason: s.Reason,
		CreatedAt: new(Created), GPUCount: s.GPUs, CPUCores: s.CPU, RAMGb: s.RAM, DiskSizeGb: s.Disk,
		TearingDown: s.TearingDown, ManagedBy: s.ManagedBy, Tier: "standard", ResourceSize: fmt.Sprintf("%dxGPU", s.GPUs),
		PricePerHourCents: 225 * s.GPUs, ProvisioningStage: "ready", EndpointURL: "https://" + s.ID + ".example.net",
	}, GPUIDs: s.Held}
	if s.Held == nil {
		v.GPUIDs = []string{}
	}
	if s.Pod {
		v.CapabilityTier, v.ComputeClass, v.VolumeGb, v.ImageURL = "pod", "on_demand", 100, "nvcr.io/nvidia/pytorch:24.05-py3"
		v.CPUCores, v.RAMGb, v.DiskSizeGb = 0, 0, 0
	}
	if s.Node != "" {
		v.NodeID = new(s.Node)
	}
	if s.Model != "" {
		v.GPUModelID = new(s.Model)
	}
	if s.Status == "interrupted" {
		v.InterruptedAt = new(Created.Add(time.Hour))
	}
	f.VMs = append(f.VMs, v)
}

// ResetWorld empties the compute tables and loads f, so cases can share
// one database per engine.
func ResetWorld(t testing.TB, st *store.Store, f *dataset.File) {
	t.Helper()
	for _, table := range []string{"api_keys", "gpus", "vms", "nodes", "fabrics", "organizations", "gpu_models"} {
		storetest.Exec(t, st, "DELETE FROM "+table)
	}
	if _, err := dataset.Load(context.Background(), st, f); err != nil {
		t.Fatalf("load the world: %v", err)
	}
}

// FixtureJSON is f as a fixture (New's).
func FixtureJSON(t testing.TB, f *dataset.File) string {
	t.Helper()
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Holders reads who holds each GPU: GPU id → VM id, held GPUs only.
func Holders(t testing.TB, st *store.Store) map[string]string {
	t.Helper()
	var rows []models.GPU
	storetest.Scan(t, st, &rows, "SELECT * FROM gpus WHERE holder_vm_id IS NOT NULL")
	out := make(map[string]string, len(rows))
	for _, g := range rows {
		out[g.ID] = *g.HolderVMID
	}
	return out
}

// HeldBy lists the GPUs vmID holds, sorted.
func HeldBy(h map[string]string, vmID string) []string {
	var out []string
	for g, v := range h {
		if v == vmID {
			out = append(out, g)
		}
	}
	sort.Strings(out)
	return out
}

// VMRow reads VM id's row, failing when there is none.
func VMRow(t testing.TB, st *store.Store, id string) models.VM {
	t.Helper()
	var v models.VM
	storetest.Take(t, st, &v, "vms", "id = ?", id)
	return v
}

// SameStrings reports whether a and b hold the same strings, in any order.
func SameStrings(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// ResetOps is ResetWorld after emptying what the lifecycle writes besides
// the world's tables: both event logs and the idempotency keys.
func ResetOps(t testing.TB, st *store.Store, f *dataset.File) {
	t.Helper()
	for _, table := range []string{"vm_events", "node_events", "idempotency_keys"} {
		storetest.Exec(t, st, "DELETE FROM "+table)
	}
	ResetWorld(t, st, f)
}

// EventsOf reads the event log of vmID, oldest first.
func EventsOf(t testing.TB, st *store.Store, vmID string) []models.VMEvent {
	t.Helper()
	var out []models.VMEvent
	storetest.Scan(t, st, &out, "SELECT * FROM vm_events WHERE vm_id = ? ORDER BY id", vmID)
	return out
}

// KeyActor is the actor the event log names for the API key token.
func KeyActor(token string) models.Actor {
	c := auth.Caller{KeyID: auth.HashToken(token)[:12]}
	return c.Actor()
}

// WorldHeartbeat reports the world's node id (gpu-node-<n>, GPUs
// GPU-<id>-0000 …) through the server at url with its credential cred:
// gpus healthy GPUs but index failed, failed for reason when reason is
// not "".
func WorldHeartbeat(t testing.TB, url, cred, node string, gpus, failed int, reason string) {
	t.Helper()
	hb := agentapi.HeartbeatRequest{NodeName: "gpu-node-" + node[1:], AgentVersion: "2.6.1", Sequence: Sequence()}
	for i := range gpus {
		g := agentapi.HeartbeatGPU{UUID: fmt.Sprintf("GPU-%s-%04d", node, i), Health: "healthy"}
		if i == failed && reason != "" {
			g.Health, g.FailedReason = "failed", reason
		}
		hb.GPUs = append(hb.GPUs, g)
	}
	if status, body := PostJSON(t, url, agentapi.HeartbeatPath, cred, hb); status != 200 {
		t.Fatalf("heartbeat of %s: %d %s", node, status, body)
	}
}
