package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"gpugraph/internal/dataset"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// The restart tests' world: two GPU models, one InfiniBand fabric with room
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
	h100 = "h100-80gb"
	mi3  = "mi300x"
)

// newWorld returns a fresh copy of the world; tests add VMs and change it.
func newWorld() *dataset.File {
	f := &dataset.File{
		GPUModels: []models.GPUModel{
			{ID: h100, Name: "NVIDIA H100 80GB HBM3", Manufacturer: models.NVIDIA, MemoryGb: 80},
			{ID: mi3, Name: "AMD Instinct MI300X", Manufacturer: models.AMD, MemoryGb: 192},
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
	addNode(f, "n1", "online", "2.6.1", "ib-1", 128, 2048, 30000, h100, 8)
	addNode(f, "n2", "offline", "2.6.1", "", 64, 1024, 10000, h100, 4)
	addNode(f, "n3", "online", "2.3.9", "ib-1", 64, 1024, 10000, h100, 4)
	addNode(f, "n4", "online", "2.5.3", "", 64, 1024, 10000, mi3, 4)
	addNode(f, "n5", "removed", "2.6.1", "", 64, 1024, 10000, h100, 4)
	addNode(f, "n6", "online", "2.6.1", "", 32, 256, 1000, h100, 4)
	failGPU(f, "n1-g7", "XID 79")
	return f
}

// pciAddress gives GPU i the bus ids of a DGX H100.
var pciAddress = []string{"0000:18:00.0", "0000:2A:00.0", "0000:3A:00.0", "0000:5D:00.0",
	"0000:9A:00.0", "0000:AB:00.0", "0000:BA:00.0", "0000:DB:00.0"}

func addNode(f *dataset.File, id, status, agent, fabric string, cpu, ram, disk int, model string, gpus int) {
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

func failGPU(f *dataset.File, id, reason string) {
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

var created = time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)

// vmSpec is a VM or pod to add to the world.
type vmSpec struct {
	id, org, node, status, reason string
	pod                           bool
	model                         string // "" for CPU-only
	gpus                          int
	held                          []string
	cpu, ram, disk                int
	tearingDown                   bool
	managedBy                     string
}

func addVM(f *dataset.File, s vmSpec) {
	if s.org == "" {
		s.org = "org-acme"
	}
	v := dataset.VM{VM: models.VM{
		ID: s.id, Name: s.id + "-name", OrganizationID: s.org, Status: models.VMStatus(s.status), StatusReason: s.reason,
		CreatedAt: new(created), GPUCount: s.gpus, CPUCores: s.cpu, RAMGb: s.ram, DiskSizeGb: s.disk,
		TearingDown: s.tearingDown, ManagedBy: s.managedBy, Tier: "standard", ResourceSize: fmt.Sprintf("%dxGPU", s.gpus),
		PricePerHourCents: 225 * s.gpus, ProvisioningStage: "ready", EndpointURL: "https://" + s.id + ".example.net",
	}, GPUIDs: s.held}
	if s.held == nil {
		v.GPUIDs = []string{}
	}
	if s.pod {
		v.CapabilityTier, v.ComputeClass, v.VolumeGb, v.ImageURL = "pod", "on_demand", 100, "nvcr.io/nvidia/pytorch:24.05-py3"
		v.CPUCores, v.RAMGb, v.DiskSizeGb = 0, 0, 0
	}
	if s.node != "" {
		v.NodeID = new(s.node)
	}
	if s.model != "" {
		v.GPUModelID = new(s.model)
	}
	if s.status == "interrupted" {
		v.InterruptedAt = new(created.Add(time.Hour))
	}
	f.VMs = append(f.VMs, v)
}

// resetWorld empties the compute tables and loads f, so cases can share
// one database per engine.
func resetWorld(t testing.TB, st *store.Store, f *dataset.File) {
	t.Helper()
	for _, table := range []string{"api_keys", "gpus", "vms", "nodes", "fabrics", "organizations", "gpu_models"} {
		storetest.Exec(t, st, "DELETE FROM "+table)
	}
	if _, err := dataset.Load(context.Background(), st, f); err != nil {
		t.Fatalf("load the world: %v", err)
	}
}

func fixtureJSON(t testing.TB, f *dataset.File) string {
	t.Helper()
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// holders reads who holds each GPU: GPU id → VM id, held GPUs only.
func holders(t testing.TB, st *store.Store) map[string]string {
	t.Helper()
	var rows []models.GPU
	storetest.Scan(t, st, &rows, "SELECT * FROM gpus WHERE holder_vm_id IS NOT NULL")
	out := make(map[string]string, len(rows))
	for _, g := range rows {
		out[g.ID] = *g.HolderVMID
	}
	return out
}

// heldBy lists the GPUs vmID holds, sorted.
func heldBy(h map[string]string, vmID string) []string {
	var out []string
	for g, v := range h {
		if v == vmID {
			out = append(out, g)
		}
	}
	sort.Strings(out)
	return out
}

func vmRow(t testing.TB, st *store.Store, id string) models.VM {
	t.Helper()
	var v models.VM
	storetest.Take(t, st, &v, "vms", "id = ?", id)
	return v
}

func sameStrings(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
