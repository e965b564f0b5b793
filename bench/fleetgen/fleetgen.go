// Package fleetgen generates fixtures (docs/contract.md#fixture) of any size for benchmarks:
// N nodes of 8 GPUs, M Run:ai pods across workloads and tenants, K metric
// samples, and optionally stopped VMs to restart. The output is a pure
// function of Options: one PCG seeded from Options.Seed drives every choice,
// and every instant is relative to the fixed Epoch.
package fleetgen

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"gpugraph/internal/dataset"
	"gpugraph/internal/services/podmetrics"
	"gpugraph/models"
)

// Options sizes a fleet.
type Options struct {
	Nodes   int    // GPU nodes, 8 GPUs each
	Pods    int    // Run:ai pods, spread over Tenants
	Samples int    // metric samples, in series of at most SeriesLength
	Tenants int    // organizations, each with its own Run:ai tenant and API key
	Seed    uint64 // the same seed gives the same fixture
	// VMsPerNode stopped VMs are placed on every node, each wanting
	// VMGPUs GPUs of its node's model: restart targets.
	VMsPerNode int
	VMGPUs     int
}

// Epoch is the instant every generated time is relative to.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// GPUsPerNode is the size of every generated node (a DGX).
const GPUsPerNode = 8

// SeriesLength is the most samples one generated series holds (one hour at
// SampleStep); more samples make more series.
const SeriesLength = 240

// SampleStep is the interval between two samples of one series.
const SampleStep = 15 * time.Second

// PodsPerWorkload is how many pods each generated workload has (the last
// one of a tenant may have fewer).
const PodsPerWorkload = 10

// Token is the API key of tenant t (0-based). It holds every permission but
// nodes.report.
func Token(t int) string { return fmt.Sprintf("fleet-%03d", t) }

// TenantID is the Run:ai tenant of organization t (0-based).
func TenantID(t int) int { return 1001 + t }

// OrgID is the id of organization t (0-based).
func OrgID(t int) string { return fmt.Sprintf("org-%03d", t) }

// NodeName is the name of node i (0-based).
func NodeName(i int) string { return fmt.Sprintf("gpu-node-%05d", i) }

// NodeID is the id of node i.
func NodeID(i int) string { return fmt.Sprintf("node-%05d", i) }

// VMID is the id of the j-th VM on node i.
func VMID(i, j int) string { return fmt.Sprintf("vm-%05d-%d", i, j) }

// Phases are the pod phases generated, with their weights out of 100.
var Phases = []struct {
	Name   string
	Weight int
}{{"Running", 55}, {"Pending", 10}, {"Succeeded", 25}, {"Failed", 10}}

// The GPU catalog of the fleet.
var Catalog = []models.GPUModel{
	{ID: "h100-80gb", Name: "NVIDIA H100 80GB HBM3", Manufacturer: models.NVIDIA, MemoryGb: 80},
	{ID: "a100-80gb", Name: "NVIDIA A100-SXM4-80GB", Manufacturer: models.NVIDIA, MemoryGb: 80},
	{ID: "mi300x", Name: "AMD Instinct MI300X", Manufacturer: models.AMD, MemoryGb: 192},
}

// busIDs are the PCI bus ids of a DGX H100's eight GPUs.
var busIDs = [GPUsPerNode]string{"18", "2A", "3A", "5D", "9A", "AB", "BA", "DB"}

// nodesPerCluster and nodesPerFabric shape the inventory.
const (
	nodesPerCluster = 1000
	nodesPerFabric  = 64
)

type gen struct {
	o        Options
	rng      *rand.Rand
	f        *dataset.File
	clusters []string
}

// Generate builds the fixture o describes.
func Generate(o Options) *dataset.File {
	if o.Tenants < 1 {
		o.Tenants = 1
	}
	if o.VMGPUs < 1 {
		o.VMGPUs = 1
	}
	g := &gen{o: o, rng: rand.New(rand.NewPCG(o.Seed, 0x666c656574)), f: &dataset.File{}}
	g.f.GPUModels = append(g.f.GPUModels, Catalog...)
	for c := 0; c*nodesPerCluster < max(o.Nodes, 1); c++ {
		g.clusters = append(g.clusters, g.uuid())
	}
	g.inventory()
	g.tenancy()
	g.vms()
	g.workloads()
	g.samples()
	return g.f
}

// uuid draws a version-4 UUID from the fleet's random source.
func (g *gen) uuid() string {
	hi, lo := g.rng.Uint64(), g.rng.Uint64()
	return fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x", hi>>32, (hi>>16)&0xffff, hi&0xfff,
		0x8000|(lo>>48)&0x3fff, lo&0xffffffffffff)
}

// modelOf is node i's GPU model: mostly H100, some A100, a few MI300X.
func modelOf(i int) models.GPUModel {
	switch i % 10 {
	case 7, 8:
		return Catalog[1]
	case 9:
		return Catalog[2]
	}
	return Catalog[0]
}

func (g *gen) clusterOf(node int) string { return g.clusters[node/nodesPerCluster] }

func (g *gen) inventory() {
	for i := 0; i < g.o.Nodes; i++ {
		if i%nodesPerFabric == 0 {
			g.f.Fabrics = append(g.f.Fabrics, models.Fabric{ID: fmt.Sprintf("ib-%03d", i/nodesPerFabric), IPCapacity: 512})
		}
		fabric := fmt.Sprintf("ib-%03d", i/nodesPerFabric)
		m := modelOf(i)
		n := dataset.Node{Node: models.Node{
			ID: NodeID(i), Name: NodeName(i), ClusterID: g.clusterOf(i), NodePool: "pool-" + m.ID,
			Status: models.NodeOnline, AgentVersion: "2.6.1", FabricID: &fabric,
			CPUCores: 224, RAMGb: 2048, DiskGb: 30000,
		}}
		for j := 0; j < GPUsPerNode; j++ {
			gpu := models.GPU{
				ID: fmt.Sprintf("%s-g%d", n.ID, j), Index: j, UUID: "GPU-" + g.uuid(),
				Address: "0000:" + busIDs[j] + ":00.0", ModelID: m.ID, Health: models.GPUHealthy,
			}
			if g.rng.IntN(500) == 0 {
				reason := "XID 79"
				gpu.Health, gpu.FailedReason = models.GPUFailed, &reason
			}
			n.GPUs = append(n.GPUs, gpu)
		}
		g.f.Nodes = append(g.f.Nodes, n)
	}
}

func (g *gen) tenancy() {
	perms := []string{"compute.read", "compute.operate", "workloads.read", "metrics.write"}
	for t := 0; t < g.o.Tenants; t++ {
		g.f.Organizations = append(g.f.Organizations, models.Organization{
			ID: OrgID(t), Name: fmt.Sprintf("Tenant %d", t), TenantID: TenantID(t), InfinibandEnabled: t%2 == 0,
		})
		g.f.APIKeys = append(g.f.APIKeys, dataset.APIKey{Token: Token(t), OrganizationID: OrgID(t), Permissions: perms})
	}
}

// vms puts VMsPerNode stopped VMs on every node, round-robin over the
// organizations, each wanting VMGPUs GPUs of its node's model.
func (g *gen) vms() {
	for i := 0; i < g.o.Nodes && g.o.VMsPerNode > 0; i++ {
		m := modelOf(i)
		for j := 0; j < g.o.VMsPerNode; j++ {
			node, model := NodeID(i), m.ID
			created := Epoch.Add(-time.Duration(g.rng.IntN(30*24)) * time.Hour)
			g.f.VMs = append(g.f.VMs, dataset.VM{VM: models.VM{
				ID: VMID(i, j), Name: fmt.Sprintf("train-%05d-%d", i, j), OrganizationID: OrgID((i*g.o.VMsPerNode + j) % g.o.Tenants),
				Status: models.VMStopped, StatusReason: "user_stopped", CreatedAt: &created,
				GPUCount: g.o.VMGPUs, GPUModelID: &model, NodeID: &node,
				CPUCores: 16, RAMGb: 128, DiskSizeGb: 500, PricePerHourCents: 225 * g.o.VMGPUs,
				ResourceSize: fmt.Sprintf("%dx%s", g.o.VMGPUs, m.ID), Tier: "standard", ProvisioningStage: "ready",
				EndpointURL: "https://" + VMID(i, j) + ".example.net",
			}, GPUIDs: []string{}})
		}
	}
}

// workloads spreads Pods over the tenants: each tenant has four projects,
// each project workloads of PodsPerWorkload pods; every fifth workload is an
// inference workload with one revision.
func (g *gen) workloads() {
	if g.o.Pods <= 0 {
		return
	}
	perTenant := make([]int, g.o.Tenants)
	for i := 0; i < g.o.Pods; i++ {
		perTenant[i%g.o.Tenants]++
	}
	podNo := 0
	for t, n := range perTenant {
		var projects []models.Project
		for p := 0; p < 4; p++ {
			pr := models.Project{ID: strconv.Itoa(TenantID(t)*10 + p), Name: fmt.Sprintf("project-%d-%d", t, p), TenantID: TenantID(t)}
			projects = append(projects, pr)
			g.f.Projects = append(g.f.Projects, pr)
		}
		for w := 0; w*PodsPerWorkload < n; w++ {
			pr := projects[w%len(projects)]
			node := g.rng.IntN(max(g.o.Nodes, 1))
			wl := models.Workload{ID: g.uuid(), Name: fmt.Sprintf("job-%d-%05d", t, w), ProjectID: pr.ID, ClusterID: g.clusterOf(node), TenantID: pr.TenantID}
			g.f.Workloads = append(g.f.Workloads, wl)
			var rev *string
			if w%5 == 4 {
				r := models.Revision{ID: g.uuid(), WorkloadID: wl.ID}
				g.f.Revisions = append(g.f.Revisions, r)
				rev = &r.ID
			}
			for k := 0; k < PodsPerWorkload && w*PodsPerWorkload+k < n; k++ {
				g.f.Pods = append(g.f.Pods, g.pod(t, wl, pr, rev, node, k, podNo))
				podNo++
			}
		}
	}
}

func (g *gen) phase() string {
	x := g.rng.IntN(100)
	for _, p := range Phases {
		if x < p.Weight {
			return p.Name
		}
		x -= p.Weight
	}
	return Phases[0].Name
}

// pod is pod k of workload wl; its node is near the workload's first node,
// in the same cluster.
func (g *gen) pod(t int, wl models.Workload, pr models.Project, rev *string, node, k, no int) models.Pod {
	created := Epoch.Add(-time.Duration(g.o.Pods-no) * time.Minute).Add(time.Duration(g.rng.IntN(60000)) * time.Millisecond)
	phase := g.phase()
	p := models.Pod{
		ID: g.uuid(), Name: fmt.Sprintf("%s-%d", wl.Name, k), PriorityClassName: "train",
		WorkloadID: wl.ID, RevisionID: rev, ClusterID: wl.ClusterID, ProjectID: &pr.ID,
		CreatedAt: created, K8sPhase: phase, TenantID: TenantID(t),
		K8sPhaseUpdatedAt: created, UpdatedAt: created,
		ProjectName: &pr.Name, WorkloadName: &wl.Name,
	}
	if rev != nil {
		p.PriorityClassName = "inference"
	}
	gpus, cpu := float64(1+g.rng.IntN(GPUsPerNode)), float64(8+g.rng.IntN(56))
	mem := fmt.Sprintf("%dG", 32+g.rng.IntN(480))
	p.RequestedResources = &models.PodRequestResources{
		GPU: &models.RequestResourceCores{Request: &gpus}, CPU: &models.RequestResourceCores{Request: &cpu},
		CPUMemory: &models.RequestResourceQuantity{Request: &mem},
	}
	p.Containers = []models.Container{{Name: "main", Image: "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"}}
	if phase != "Pending" && g.o.Nodes > 0 {
		// Pods of a workload share a rack: nodes next to its first one,
		// never across a cluster boundary.
		first := node - node%nodesPerCluster
		n := first + (node-first+k)%min(nodesPerCluster, g.o.Nodes-first)
		name, pool := NodeName(n), "pool-"+modelOf(n).ID
		ip := fmt.Sprintf("10.%d.%d.%d", (no>>16)&255, (no>>8)&255, no&255)
		started := created.Add(time.Duration(5+g.rng.IntN(120)) * time.Second)
		p.NodeName, p.CurrentNodePool, p.IP = &name, &pool, &ip
		p.RequestedNodePools = []string{pool}
		p.AllocatedResources = &models.AllocatedResources{GPU: &gpus, CPU: &cpu, CPUMemory: &mem}
		p.Containers[0].StartedAt = &started
		p.K8sPhaseUpdatedAt, p.UpdatedAt = started, started
	}
	if phase == "Succeeded" || phase == "Failed" {
		done := created.Add(time.Duration(10+g.rng.IntN(600)) * time.Minute)
		p.CompletedAt, p.K8sPhaseUpdatedAt, p.UpdatedAt = &done, done, done
	}
	return p
}

// seriesOf is the type and GPU label (-1: none) of a pod's round-th series:
// a GPU's utilization, the CPU's usage, the GPU's memory, the CPU's memory,
// then the other GPUs' utilization and memory in turn.
func seriesOf(round int) (string, int) {
	switch round {
	case 0:
		return "GPU_UTILIZATION_PER_GPU", 0
	case 1:
		return "CPU_USAGE_CORES", -1
	case 2:
		return "GPU_MEMORY_USAGE_BYTES_PER_GPU", 0
	case 3:
		return "CPU_MEMORY_USAGE_BYTES", -1
	}
	if round%2 == 0 {
		return "GPU_UTILIZATION_PER_GPU", (round-4)/2 + 1
	}
	return "GPU_MEMORY_USAGE_BYTES_PER_GPU", (round-4)/2 + 1
}

// samples writes Samples values as series of SeriesLength samples at
// SampleStep ending at Epoch, over the running pods in turn.
func (g *gen) samples() {
	var running []models.Pod
	for _, p := range g.f.Pods {
		if p.K8sPhase == "Running" {
			running = append(running, p)
		}
	}
	if len(running) == 0 {
		return
	}
	left := g.o.Samples
	for s := 0; left > 0; s++ {
		typ, gpu := seriesOf(s / len(running))
		series := podmetrics.MetricSeries{PodID: running[s%len(running)].ID, Type: typ}
		if gpu >= 0 {
			series.Labels = map[string]string{"gpu": strconv.Itoa(gpu)}
		}
		n := min(left, SeriesLength)
		for i := 0; i < n; i++ {
			ts := Epoch.Add(-time.Duration(n-1-i) * SampleStep)
			series.Samples = append(series.Samples, [2]string{models.FormatTime(ts), g.value(typ)})
		}
		g.f.PodMetrics = append(g.f.PodMetrics, series)
		left -= n
	}
}

func (g *gen) value(typ string) string {
	switch typ {
	case "GPU_UTILIZATION_PER_GPU":
		return strconv.Itoa(g.rng.IntN(101))
	case "GPU_MEMORY_USAGE_BYTES_PER_GPU", "CPU_MEMORY_USAGE_BYTES":
		return strconv.FormatInt(g.rng.Int64N(80<<30), 10)
	}
	return strconv.FormatFloat(float64(g.rng.IntN(6400))/100, 'f', -1, 64)
}
