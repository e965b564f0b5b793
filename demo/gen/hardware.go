package main

import (
	"fmt"
	"time"

	"gpugraph/models"
)

const (
	// clusterEast is the cluster id of the Run:ai seed, so its examples work as written.
	clusterEast = "71f69d83-ba66-4822-adf5-55ce55efd210"
	clusterWest = "c4d8a1e6-3b2f-4e9a-8d17-5f60b2a9c3e8"

	fabricID = "ib-1"
)

func (g *gen) addGPUModels() {
	g.f.GPUModels = []GPUModel{
		{ID: "h100-80gb", Name: "NVIDIA H100 80GB HBM3", Manufacturer: "NVIDIA", MemoryGb: 80},
		{ID: "h200-141gb", Name: "NVIDIA H200", Manufacturer: "NVIDIA", MemoryGb: 141},
		{ID: "a100-80gb", Name: "NVIDIA A100-SXM4-80GB", Manufacturer: "NVIDIA", MemoryGb: 80},
		{ID: "mi300x-192gb", Name: "AMD Instinct MI300X", Manufacturer: "AMD", MemoryGb: 192},
	}
	for _, m := range g.f.GPUModels {
		g.models[m.ID] = m
	}
}

// hostShape is the CPU cores, RAM and local NVMe (GB) of a server as sold.
type hostShape struct{ cpu, ram, disk int }

var (
	dgxH100 = hostShape{cpu: 112, ram: 2048, disk: 30720} // 2× Xeon 8480C, 8× 3.84 TB
	dgxH200 = hostShape{cpu: 112, ram: 2048, disk: 30720}
	dgxA100 = hostShape{cpu: 128, ram: 2048, disk: 15360} // 2× EPYC 7742, 8× 1.92 TB
	mi300x  = hostShape{cpu: 192, ram: 2304, disk: 30720} // 2× EPYC 9654 OAM platform
)

// PCI bus ids of the eight GPU slots, as lspci shows them on the boards.
var (
	dgxSlots    = []string{"0000:18:00.0", "0000:2A:00.0", "0000:3A:00.0", "0000:5D:00.0", "0000:9A:00.0", "0000:AB:00.0", "0000:BA:00.0", "0000:DB:00.0"}
	oamSlots    = []string{"0000:05:00.0", "0000:26:00.0", "0000:46:00.0", "0000:65:00.0", "0000:85:00.0", "0000:A6:00.0", "0000:C6:00.0", "0000:E5:00.0"}
	gpusPerNode = 8
)

type nodeSpec struct {
	name, cluster, pool, model, agent, status string
	shape                                     hostShape
	fabric                                    bool
	leaving                                   time.Duration // leavingAt − anchor; 0 when it is not leaving
	failed                                    map[int]string
}

// nodeSpecs is the fleet. Each odd node exists for a restart outcome:
// an agent too old for InfiniBand, one too old for AMD, failed GPUs, one
// node offline and one removed.
func nodeSpecs() []nodeSpec {
	const online, offline, removed = "online", "offline", "removed"
	return []nodeSpec{
		{name: "dgx-h100-01", cluster: clusterEast, pool: "h100", model: "h100-80gb", agent: "2.6.1", status: online, shape: dgxH100, fabric: true},
		{name: "dgx-h100-02", cluster: clusterEast, pool: "h100", model: "h100-80gb", agent: "2.6.1", status: online, shape: dgxH100, fabric: true,
			failed: map[int]string{3: "XID 79"}},
		{name: "dgx-h100-03", cluster: clusterEast, pool: "h100", model: "h100-80gb", agent: "2.6.1", status: online, shape: dgxH100, fabric: true},
		{name: "dgx-h100-04", cluster: clusterEast, pool: "h100", model: "h100-80gb", agent: "2.3.9", status: online, shape: dgxH100, fabric: true,
			leaving: 72 * time.Hour},
		{name: "dgx-h200-01", cluster: clusterEast, pool: "h200", model: "h200-141gb", agent: "2.6.1", status: online, shape: dgxH200, fabric: true},
		{name: "dgx-h200-02", cluster: clusterEast, pool: "h200", model: "h200-141gb", agent: "2.6.1", status: online, shape: dgxH200, fabric: true},
		{name: "mi300x-01", cluster: clusterEast, pool: "mi300x", model: "mi300x-192gb", agent: "2.5.3", status: online, shape: mi300x},
		{name: "mi300x-02", cluster: clusterEast, pool: "mi300x", model: "mi300x-192gb", agent: "2.6.1", status: online, shape: mi300x},
		{name: "dgx-a100-01", cluster: clusterWest, pool: "a100", model: "a100-80gb", agent: "2.6.1", status: online, shape: dgxA100},
		{name: "dgx-a100-02", cluster: clusterWest, pool: "a100", model: "a100-80gb", agent: "2.6.1", status: online, shape: dgxA100,
			failed: map[int]string{5: "XID 48"}},
		{name: "dgx-a100-03", cluster: clusterWest, pool: "a100", model: "a100-80gb", agent: "2.6.0", status: offline, shape: dgxA100},
		{name: "dgx-a100-04", cluster: clusterWest, pool: "a100", model: "a100-80gb", agent: "2.5.0", status: removed, shape: dgxA100,
			leaving: -6 * 24 * time.Hour},
	}
}

func (g *gen) addNodes() {
	for i, s := range nodeSpecs() {
		g.addNode(s, i+1)
	}
}

func (g *gen) addNode(s nodeSpec, subnet int) {
	n := &Node{
		ID:           "node-" + s.name,
		Name:         s.name,
		ClusterID:    s.cluster,
		NodePool:     s.pool,
		Status:       s.status,
		AgentVersion: s.agent,
		CPUCores:     s.shape.cpu,
		RAMGb:        s.shape.ram,
		DiskGb:       s.shape.disk,
	}
	g.nodeFacts[n] = nodeFacts{model: s.model, subnet: subnet}
	if s.fabric {
		n.FabricID = new(fabricID)
	}
	if s.leaving != 0 {
		n.LeavingAt = new(msTime(anchor.Add(s.leaving)))
	}
	for i := range gpusPerNode {
		n.GPUs = append(n.GPUs, g.gpu(n, i, s.failed[i]))
	}
	g.nodes[n.Name] = n
	g.f.Nodes = append(g.f.Nodes, n)
}

func (g *gen) gpu(n *Node, index int, failedReason string) *GPU {
	slots := dgxSlots
	if g.models[g.nodeFacts[n].model].Manufacturer == "AMD" {
		slots = oamSlots
	}
	gpu := &GPU{
		ID:      fmt.Sprintf("%s-gpu-%d", n.Name, index),
		Index:   index,
		UUID:    "GPU-" + nameUUID("gpu", fmt.Sprintf("%s/%d", n.Name, index)),
		Address: slots[index],
		ModelID: g.nodeFacts[n].model,
		Health:  "healthy",
	}
	if failedReason != "" {
		gpu.Health = "failed"
		gpu.FailedReason = new(failedReason)
	}
	return gpu
}

// addFabric sizes ib-1 to exactly the addresses its pods hold, so that a
// stopped pod of an InfiniBand organization on it answers
// INSUFFICIENT_IP_CAPACITY.
func (g *gen) addFabric() {
	g.f.Fabrics = []*Fabric{{ID: fabricID, IPCapacity: len(ibHolders(g.f))}}
}

// ibHolders lists the VMs holding an address of ib-1 (docs/contract.md#restart): pods of an
// InfiniBand-enabled organization, on a fabric node, in a holding status.
func ibHolders(f *Fixture) []string {
	ib := map[string]bool{}
	for _, o := range f.Organizations {
		ib[o.ID] = o.InfinibandEnabled
	}
	onFabric := map[string]bool{}
	for _, n := range f.Nodes {
		onFabric[n.ID] = n.FabricID != nil
	}
	var out []string
	for _, v := range f.VMs {
		if v.CapabilityTier == models.TierPod && ib[v.OrganizationID] && v.NodeID != nil && onFabric[*v.NodeID] && holds(v.Status) {
			out = append(out, v.ID)
		}
	}
	return out
}

func holds(status string) bool { return models.VMStatus(status).Holds() }
