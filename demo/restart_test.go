package demo

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/services/compute"
	"gpugraph/models"
	"gpugraph/placement"
)

// outcome is what POST /v1/vms/{id}/restart answers.
type outcome struct {
	HTTP   int
	Code   string          // error code; "" on 200
	Status models.VMStatus // the VM's status after a 200
	Msg    string          // must appear in the error message
}

// scenarios is the table of demo/README.md: each restart outcome of the restart contract (docs/contract.md)
// and the demo VM that shows it, restarted with an acme-operator key.
var scenarios = []struct {
	id   string
	want outcome
}{
	{"vm-restart-ok-running", outcome{HTTP: 200, Status: models.VMRunning}},
	{"vm-restart-ok-running-pod", outcome{HTTP: 200, Status: models.VMRunning}},
	{"vm-restart-ok-stopped", outcome{HTTP: 200, Status: models.VMDeploying}},
	{"vm-restart-ok-failed", outcome{HTTP: 200, Status: models.VMDeploying}},
	{"vm-restart-ok-pod-stopped", outcome{HTTP: 200, Status: models.VMDeploying}},
	{"vm-restart-ok-pod-failed", outcome{HTTP: 200, Status: models.VMDeploying}},
	{"vm-interrupted-resumes", outcome{HTTP: 200, Status: models.VMRunning}},
	{"vm-node-removed", outcome{HTTP: 200, Status: models.VMDeploying}},
	{"vm-globex-sdxl-h100", outcome{HTTP: 404, Code: "VM_NOT_FOUND"}},
	{"vm-serving-readonly", outcome{HTTP: 403, Code: "VM_READ_ONLY"}},
	{"vm-terminated", outcome{HTTP: 409, Code: "VM_TERMINATED"}},
	{"vm-pending", outcome{HTTP: 409, Code: "VM_NOT_READY"}},
	{"vm-deploying", outcome{HTTP: 409, Code: "VM_NOT_READY"}},
	{"vm-node-removed-no-capacity", outcome{HTTP: 503, Code: "VM_NO_CAPACITY",
		Msg: "0/12 nodes can take it: 10 too few free NVIDIA A100-SXM4-80GB GPUs, 1 offline, 1 removed"}},
	{"vm-pod-stopping", outcome{HTTP: 409, Code: "POD_STOPPING"}},
	{"vm-node-offline", outcome{HTTP: 409, Code: "VM_NODE_OFFLINE"}},
	{"vm-interrupted", outcome{HTTP: 409, Code: "VM_NODE_OFFLINE"}},
	{"vm-pod-node-offline", outcome{HTTP: 409, Code: "POD_NODE_OFFLINE"}},
	{"vm-no-infiniband", outcome{HTTP: 409, Code: "POD_NODE_NO_INFINIBAND", Msg: "node agent 2.3.9"}},
	{"vm-no-amd-grant", outcome{HTTP: 409, Code: "POD_NODE_NO_AMD_GRANT", Msg: "node agent 2.5.3"}},
	{"vm-busy-failed-gpu", outcome{HTTP: 503, Code: "VM_NODE_BUSY",
		Msg: "0000:5D:00.0 (XID 79) on node dgx-h100-02; stopping it and starting it again would place it on healthy GPUs"}},
	{"vm-busy-failed-gpu-pod", outcome{HTTP: 503, Code: "POD_NODE_BUSY",
		Msg: "0000:AB:00.0 (XID 48) on node dgx-a100-02; the node has 1 healthy"}},
	{"vm-busy-no-free-gpus", outcome{HTTP: 503, Code: "VM_NODE_BUSY", Msg: "0 free NVIDIA A100-SXM4-80GB GPUs, 2 needed"}},
	{"vm-busy-host-resources", outcome{HTTP: 503, Code: "VM_NODE_BUSY", Msg: "too little free RAM (128 GB free, 512 GB needed)"}},
	{"vm-no-ip-capacity", outcome{HTTP: 503, Code: "INSUFFICIENT_IP_CAPACITY", Msg: "(3 of 3 held)"}},
}

const operatorOrg = "org-acme"

// TestRestartOutcomes runs the restart checks of the restart contract (docs/contract.md), in their order,
// with the placement package, on every scenario.
func TestRestartOutcomes(t *testing.T) {
	f := demoAt(t, time.Now())
	codes := map[string]bool{}
	for _, sc := range scenarios {
		// Each on the data as loaded.
		got := newWorld(f).restart(sc.id, operatorOrg)
		checkOutcome(t, sc.id, got, sc.want)
		if testing.Verbose() {
			t.Logf("%-30s %d %s %s%s", sc.id, got.HTTP, got.Code, got.Status, got.Msg)
		}
		codes[sc.want.Code] = true
	}
	w := newWorld(f)
	w.restart("vm-node-removed", operatorOrg)
	if got := deref(w.vms["vm-node-removed"].NodeID); got != "node-dgx-a100-01" {
		t.Errorf("vm-node-removed was placed on %s, want node-dgx-a100-01 (the README says so)", got)
	}
	for _, code := range []string{"VM_NOT_FOUND", "VM_READ_ONLY", "VM_TERMINATED", "VM_NOT_READY", "POD_STOPPING",
		"POD_NODE_OFFLINE", "VM_NODE_OFFLINE", "POD_NODE_NO_INFINIBAND", "POD_NODE_NO_AMD_GRANT", "POD_NODE_BUSY",
		"VM_NODE_BUSY", "INSUFFICIENT_IP_CAPACITY", "VM_NO_CAPACITY", ""} {
		if !codes[code] {
			t.Errorf("no scenario answers %q", code)
		}
	}
}

// TestRestartOutcomesInAnyOrder restarts every scenario one after the other
// on the same data, in several orders, after every other organization
// restarted its own stopped VMs, and after the prepaid organization's
// balance ran out (demo/README.md, "Metering"): a playground user who
// tries them in any order, before or after that stop, sees the answers of
// the README.
func TestRestartOutcomesInAnyOrder(t *testing.T) {
	f := demoAt(t, time.Now())
	forward := make([]int, len(scenarios))
	for i := range forward {
		forward[i] = i
	}
	reverse := slices.Clone(forward)
	slices.Reverse(reverse)
	for name, order := range map[string][]int{"forward": forward, "reverse": reverse} {
		for _, othersFirst := range []bool{false, true} {
			for _, ranOut := range []bool{false, true} {
				w := newWorld(f)
				exhausted := ""
				if ranOut {
					exhausted = "org-initech"
					if n := w.balanceRanOut(exhausted); n != 3 {
						t.Fatalf("Initech's balance running out stops %d workloads; want its 3", n)
					}
				}
				what := fmt.Sprintf("%s (others first: %v, Initech ran out: %v)", name, othersFirst, ranOut)
				checkInOrder(t, what, w, f, order, othersFirst, exhausted)
			}
		}
	}
}

// balanceRanOut stops every running, deploying and interrupted VM of org
// as the metering pass does when its balance runs out (disks and volumes
// kept, GPUs released), and answers how many it stopped.
func (w *world) balanceRanOut(org string) int {
	n := 0
	for _, v := range w.vms {
		if v.OrganizationID == org && (v.Status == models.VMRunning || v.Status == models.VMDeploying || v.Status == models.VMInterrupted) {
			v.Status, v.StatusReason, v.GPUIDs = models.VMStopped, models.ReasonInsufficientBalance, nil
			n++
		}
	}
	return n
}

// checkInOrder restarts the scenarios in order on w, first (othersFirst)
// every other organization's VMs of f, in its order, but those of
// exhausted, whose restarts answer 402; it checks each answer and that a
// success is not repeated.
func checkInOrder(t *testing.T, what string, w *world, f *file, order []int, othersFirst bool, exhausted string) {
	t.Helper()
	if othersFirst {
		for _, v := range f.VMs {
			if v.OrganizationID != operatorOrg && v.OrganizationID != exhausted {
				w.restart(v.ID, v.OrganizationID)
			}
		}
	}
	for _, i := range order {
		sc := scenarios[i]
		got := w.restart(sc.id, operatorOrg)
		checkOutcome(t, what+" "+sc.id, got, sc.want)
	}
	// The second time round a success is not repeated: a VM that
	// went deploying now answers VM_NOT_READY.
	for _, sc := range scenarios {
		if sc.want.Status == models.VMDeploying {
			if got := w.restart(sc.id, operatorOrg); got.Code != "VM_NOT_READY" {
				t.Errorf("%s: %s again: %+v, want VM_NOT_READY", what, sc.id, got)
			}
		}
	}
}

func checkOutcome(t *testing.T, name string, got, want outcome) {
	t.Helper()
	if got.HTTP != want.HTTP || got.Code != want.Code || (want.HTTP == 200 && got.Status != want.Status) ||
		!strings.Contains(got.Msg, want.Msg) {
		t.Errorf("%s: got %+v, want %+v", name, got, want)
	}
}

// world is the compute side of the demo, enough to answer restarts.
type world struct {
	models map[string]models.GPUModel
	orgs   map[string]models.Organization
	nodes  []node
	vms    map[string]*vm
	fabric map[string]int // capacity by id
}

func newWorld(f *file) *world {
	w := &world{models: map[string]models.GPUModel{}, orgs: map[string]models.Organization{},
		nodes: f.Nodes, vms: map[string]*vm{}, fabric: map[string]int{}}
	for _, m := range f.GPUModels {
		w.models[m.ID] = m
	}
	for _, o := range f.Organizations {
		w.orgs[o.ID] = o
	}
	for _, fb := range f.Fabrics {
		w.fabric[fb.ID] = fb.IPCapacity
	}
	for _, v := range f.VMs {
		c := v
		c.GPUIDs = slices.Clone(v.GPUIDs)
		w.vms[v.ID] = &c
	}
	return w
}

// snapshot is what the claim transaction reads: every node with its GPUs'
// holders, the VMs' host shares and the fabric's address holders.
func (w *world) snapshot() []*placement.NodeInfo {
	holder := map[string]string{}
	fabrics := map[string]*placement.Fabric{}
	for id, capacity := range w.fabric {
		fabrics[id] = &placement.Fabric{ID: id, IPCapacity: capacity}
	}
	nodeFabric := map[string]string{}
	for _, n := range w.nodes {
		nodeFabric[n.ID] = deref(n.FabricID)
	}
	holdings := map[string][]placement.Holding{}
	for _, v := range sortedVMs(w.vms) {
		if !v.Status.Holds() {
			continue
		}
		for _, g := range v.GPUIDs {
			holder[g] = v.ID
		}
		nodeID := deref(v.NodeID)
		if v.IsPod() {
			if fb := fabrics[nodeFabric[nodeID]]; fb != nil && w.orgs[v.OrganizationID].InfinibandEnabled {
				fb.Holders = append(fb.Holders, v.ID)
			}
			continue
		}
		holdings[nodeID] = append(holdings[nodeID], placement.Holding{VMID: v.ID, CPUCores: v.CPUCores, RAMGb: v.RAMGb, DiskGb: v.DiskSizeGb})
	}
	var out []*placement.NodeInfo
	for _, n := range w.nodes {
		ni := &placement.NodeInfo{ID: n.ID, Name: n.Name, State: nodeState(n.Status), Status: string(n.Status), AgentVersion: n.AgentVersion,
			CPUCores: n.CPUCores, RAMGb: n.RAMGb, DiskGb: n.DiskGb, Holdings: holdings[n.ID], Fabric: fabrics[nodeFabric[n.ID]]}
		for _, g := range n.GPUs {
			ni.GPUs = append(ni.GPUs, placement.GPU{ID: g.ID, Index: g.Index, Address: g.Address, ModelID: g.ModelID,
				Healthy: g.Health == models.GPUHealthy, FailedReason: deref(g.FailedReason), HolderID: holder[g.ID]})
		}
		out = append(out, ni)
	}
	return out
}

func sortedVMs(m map[string]*vm) []*vm {
	var out []*vm
	for _, v := range m {
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b *vm) int { return strings.Compare(a.ID, b.ID) })
	return out
}

func fail(st *placement.Status, pod bool) outcome {
	e := compute.Refusal(st, pod)
	return outcome{HTTP: e.Status, Code: e.Code, Msg: e.Message}
}

func nodeState(s models.NodeStatus) placement.NodeState {
	switch s {
	case models.NodeOnline:
		return placement.NodeStateOnline
	case models.NodeOffline:
		return placement.NodeStateOffline
	case models.NodeRemoved:
		return placement.NodeStateRemoved
	}
	return placement.NodeStateUnknown
}

func refuse(httpStatus int, code string) outcome { return outcome{HTTP: httpStatus, Code: code} }

// restart follows the check order of the restart contract (docs/contract.md) and, on success, claims what
// the VM then holds.
func (w *world) restart(id, orgID string) outcome {
	v := w.vms[id]
	if v == nil || v.OrganizationID != orgID {
		return refuse(http.StatusNotFound, "VM_NOT_FOUND")
	}
	if v.ManagedBy == "serving" {
		return refuse(http.StatusForbidden, "VM_READ_ONLY")
	}
	switch v.Status {
	case models.VMTerminated:
		return refuse(http.StatusConflict, "VM_TERMINATED")
	case models.VMPending, models.VMDeploying:
		return refuse(http.StatusConflict, "VM_NOT_READY")
	}
	m := w.models[deref(v.GPUModelID)]
	req := &placement.Request{VMID: v.ID, Pod: v.IsPod(),
		GPUModel: placement.Model{ID: m.ID, Name: m.Name, Manufacturer: string(m.Manufacturer)},
		GPUCount: v.GPUCount, CPUCores: v.CPUCores, RAMGb: v.RAMGb, DiskGb: v.DiskSizeGb,
		InfiniBand: w.orgs[v.OrganizationID].InfinibandEnabled}
	nodes := w.snapshot()
	var own *placement.NodeInfo
	for _, n := range nodes {
		if n.ID == deref(v.NodeID) {
			own = n
		}
	}
	stoppedOrFailed := v.Status == models.VMStopped || v.Status == models.VMFailed
	f := placement.Default()
	if stoppedOrFailed && (own.State == placement.NodeStateRemoved || v.StatusReason == "node_removed") {
		p, st := f.Place(req, nodes)
		if st != nil {
			return fail(st, req.Pod)
		}
		v.NodeID = &p.Node.ID
		return w.claim(v, p.GPUIDs)
	}
	if stoppedOrFailed && v.IsPod() && v.TearingDown {
		return refuse(http.StatusConflict, "POD_STOPPING")
	}
	switch v.Status {
	case models.VMRunning:
		if st := placement.CheckRunning(req, own); st != nil {
			return fail(st, req.Pod)
		}
		return outcome{HTTP: 200, Status: models.VMRunning}
	case models.VMInterrupted:
		if st := (placement.NodeOnline{}).Filter(req, own); st != nil {
			return fail(st, req.Pod)
		}
		v.Status = models.VMRunning
		return outcome{HTTP: 200, Status: models.VMRunning}
	}
	if st := f.CheckOwnNode(req, own); st != nil {
		return fail(st, req.Pod)
	}
	return w.claim(v, placement.PickGPUs(req, own))
}

func (w *world) claim(v *vm, gpus []string) outcome {
	v.Status, v.StatusReason, v.GPUIDs = models.VMDeploying, "user_restarted", gpus
	return outcome{HTTP: 200, Status: models.VMDeploying}
}
