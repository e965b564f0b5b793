package placement

import (
	"reflect"
	"testing"
)

// filterCase runs one filter on one node and checks the whole Status.
type filterCase struct {
	name string
	req  *Request
	node *NodeInfo
	want *Status // nil: passes
}

func runFilterCases(t *testing.T, f Filter, cases []filterCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := f.Filter(tc.req, tc.node)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s.Filter:\n got %+v\nwant %+v", f.Name(), got, tc.want)
			}
		})
	}
}

func withStatus(n *NodeInfo, s NodeState) *NodeInfo { n.State = s; return n }

// withUnknownStatus is a node whose stored status placement does not know.
func withUnknownStatus(n *NodeInfo, s string) *NodeInfo {
	n.State, n.Status = NodeStateUnknown, s
	return n
}
func withAgent(n *NodeInfo, v string) *NodeInfo   { n.AgentVersion = v; return n }
func onFabric(n *NodeInfo, f *Fabric) *NodeInfo   { n.Fabric = f; return n }
func withGPUs(n *NodeInfo, g []GPU) *NodeInfo     { n.GPUs = g; return n }
func holding(n *NodeInfo, h ...Holding) *NodeInfo { n.Holdings = h; return n }

func TestNodeOnline(t *testing.T) {
	runFilterCases(t, NodeOnline{}, []filterCase{
		{"online passes", vmReq(1), node("n1"), nil},
		{"offline VM", vmReq(1), withStatus(node("n1"), NodeStateOffline), &Status{
			Code: NodeOffline, Reason: "offline",
			Message: "node n1 is offline; try again when it is back online"}},
		{"offline pod", podReq(h100, 1), withStatus(node("n1"), NodeStateOffline), &Status{
			Code: NodeOffline, Reason: "offline",
			Message: "node n1 is offline; try again when it is back online"}},
		{"removed", vmReq(1), withStatus(node("n1"), NodeStateRemoved), &Status{
			Code: NodeOffline, Reason: "removed",
			Message: "node n1 has been removed"}},
		{"other status", vmReq(1), withUnknownStatus(node("n1"), "draining"), &Status{
			Code: NodeOffline, Reason: "draining",
			Message: `node n1 is not online (status "draining")`}},
		{"empty status", vmReq(1), withUnknownStatus(node("n1"), ""), &Status{
			Code: NodeOffline, Reason: "status unknown",
			Message: `node n1 is not online (status "")`}},
	})
}

func TestInfiniBandAgent(t *testing.T) {
	ib := &Fabric{ID: "ib-1", IPCapacity: 64}
	plainOrg := podReq(h100, 1)
	plainOrg.InfiniBand = false
	vm := vmReq(1)
	vm.InfiniBand = true
	runFilterCases(t, InfiniBandAgent{}, []filterCase{
		{"new agent passes", podReq(h100, 1), onFabric(withAgent(node("n1"), "2.4.0"), ib), nil},
		{"off fabric passes", podReq(h100, 1), withAgent(node("n1"), "2.3.0"), nil},
		{"org without IB passes", plainOrg, onFabric(withAgent(node("n1"), "2.3.0"), ib), nil},
		{"plain VM passes", vm, onFabric(withAgent(node("n1"), "2.3.0"), ib), nil},
		{"old agent", podReq(h100, 1), onFabric(withAgent(node("n1"), "2.3.9"), ib), &Status{
			Code: NoInfiniBand, Reason: "agent too old for InfiniBand",
			Message: "node n1 runs node agent 2.3.9; InfiniBand needs 2.4.0 or later"}},
		{"release candidate", podReq(h100, 1), onFabric(withAgent(node("n1"), "2.4.0-rc1"), ib), &Status{
			Code: NoInfiniBand, Reason: "agent too old for InfiniBand",
			Message: "node n1 runs node agent 2.4.0-rc1; InfiniBand needs 2.4.0 or later"}},
		{"unknown agent", podReq(h100, 1), onFabric(withAgent(node("n1"), ""), ib), &Status{
			Code: NoInfiniBand, Reason: "agent too old for InfiniBand",
			Message: "node n1 runs a node agent of unknown version; InfiniBand needs 2.4.0 or later"}},
	})
}

func TestAMDAgent(t *testing.T) {
	runFilterCases(t, AMDAgent{}, []filterCase{
		{"new agent passes", podReq(mi300, 1), withAgent(node("n1"), "2.6.0"), nil},
		{"NVIDIA passes", podReq(h100, 1), withAgent(node("n1"), "2.0.0"), nil},
		{"plain VM passes", &Request{VMID: "vm-1", GPUModel: mi300, GPUCount: 1}, withAgent(node("n1"), "2.0.0"), nil},
		{"old agent", podReq(mi300, 1), withAgent(node("n1"), "2.5.3"), &Status{
			Code: NoAMDGrant, Reason: "agent too old for AMD GPUs",
			Message: "node n1 runs node agent 2.5.3; AMD GPUs need 2.6.0 or later"}},
		{"unparseable agent", podReq(mi300, 1), withAgent(node("n1"), "dev"), &Status{
			Code: NoAMDGrant, Reason: "agent too old for AMD GPUs",
			Message: `node n1 runs an unrecognised node agent version "dev"; AMD GPUs need 2.6.0 or later`}},
	})
}

func TestFreeGPUs(t *testing.T) {
	mixed := withGPUs(node("n1"), append(gpus("n1", h100, 4), GPU{ID: "n1-a", Index: 4, Address: "0000:C8:00.0", ModelID: a100.ID, Healthy: true}))
	runFilterCases(t, FreeGPUs{}, []filterCase{
		{"enough passes", vmReq(8), node("n1"), nil},
		{"own GPUs count as free", vmReq(2), hold(node("n1"), "other", 0, 1, 2, 3, 4, 5), nil},
		{"no GPUs needed passes", vmReq(0), withGPUs(node("n1"), nil), nil},
		{"held by others", vmReq(4), hold(node("n1"), "other", 0, 1, 2, 3, 4, 5), &Status{
			Code: NodeBusy, Reason: "too few free NVIDIA H100 GPUs",
			Message: "node n1 has 2 free NVIDIA H100 GPUs, 4 needed"}},
		{"one free, failed named", vmReq(2), fail(hold(node("n1"), "other", 0, 1, 2, 4, 6), 3, 7), &Status{
			Code: NodeBusy, Reason: "too few free NVIDIA H100 GPUs",
			Message: "node n1 has 1 free NVIDIA H100 GPU, 2 needed; failed GPUs 0000:48:00.0 (XID 79), 0000:88:00.0 (XID 79)"}},
		{"one failed, pod code", podReq(h100, 8), fail(node("n1"), 2), &Status{
			Code: NodeBusy, Reason: "too few free NVIDIA H100 GPUs",
			Message: "node n1 has 7 free NVIDIA H100 GPUs, 8 needed; failed GPU 0000:38:00.0 (XID 79)"}},
		{"other model does not count", vmReq(5), mixed, &Status{
			Code: NodeBusy, Reason: "too few free NVIDIA H100 GPUs",
			Message: "node n1 has 4 free NVIDIA H100 GPUs, 5 needed"}},
		{"no GPUs of the model", &Request{VMID: "vm-1", GPUModel: a100, GPUCount: 1}, node("n1"), &Status{
			Code: NodeBusy, Reason: "too few free NVIDIA A100 GPUs",
			Message: "node n1 has 0 free NVIDIA A100 GPUs, 1 needed"}},
		{"model without a name", &Request{VMID: "vm-1", GPUModel: Model{ID: "b200"}, GPUCount: 1}, node("n1"), &Status{
			Code: NodeBusy, Reason: "too few free b200 GPUs",
			Message: "node n1 has 0 free b200 GPUs, 1 needed"}},
	})
}

func TestHostResources(t *testing.T) {
	runFilterCases(t, HostResources{}, []filterCase{
		{"fits exactly", vmReq(1), holding(node("n1"), Holding{VMID: "a", CPUCores: 112, RAMGb: 1920, DiskGb: 29500}), nil},
		{"own holding ignored", vmReq(1), holding(node("n1"), Holding{VMID: "vm-1", CPUCores: 128, RAMGb: 2048, DiskGb: 30000}), nil},
		{"pods hold none", &Request{VMID: "pod-1", Pod: true, CPUCores: 999, RAMGb: 9999, DiskGb: 99999}, node("n1"), nil},
		{"RAM short", vmReq(1), holding(node("n1"), Holding{VMID: "a", RAMGb: 1000}, Holding{VMID: "b", RAMGb: 984}), &Status{
			Code: NodeBusy, Reason: "too little RAM",
			Message: "node n1 has too little free RAM (64 GB free, 128 GB needed)"}},
		{"CPU short, one core", vmReq(1), holding(node("n1"), Holding{VMID: "a", CPUCores: 127}), &Status{
			Code: NodeBusy, Reason: "too little CPU",
			Message: "node n1 has too little free CPU (1 core free, 16 cores needed)"}},
		{"disk and CPU short", vmReq(1), holding(node("n1"), Holding{VMID: "a", CPUCores: 120, DiskGb: 29600}), &Status{
			Code: NodeBusy, Reason: "too little disk and CPU",
			Message: "node n1 has too little free disk (400 GB free, 500 GB needed) and CPU (8 cores free, 16 cores needed)"}},
		{"all short, over-committed shows 0", vmReq(1), holding(node("n1"), Holding{VMID: "a", CPUCores: 130, RAMGb: 2000, DiskGb: 30000}), &Status{
			Code: NodeBusy, Reason: "too little disk, RAM and CPU",
			Message: "node n1 has too little free disk (0 GB free, 500 GB needed), RAM (48 GB free, 128 GB needed) and CPU (0 cores free, 16 cores needed)"}},
	})
}

func TestInfiniBandAddress(t *testing.T) {
	full := &Fabric{ID: "ib-1", IPCapacity: 2, Holders: []string{"p2", "p3"}}
	ownIn := &Fabric{ID: "ib-1", IPCapacity: 2, Holders: []string{"p2", "pod-1"}}
	plainOrg := podReq(h100, 1)
	plainOrg.InfiniBand = false
	runFilterCases(t, InfiniBandAddress{}, []filterCase{
		{"free address passes", podReq(h100, 1), onFabric(node("n1"), &Fabric{ID: "ib-1", IPCapacity: 2, Holders: []string{"p2"}}), nil},
		{"own address counts as free", podReq(h100, 1), onFabric(node("n1"), ownIn), nil},
		{"off fabric passes", podReq(h100, 1), node("n1"), nil},
		{"org without IB passes", plainOrg, onFabric(node("n1"), full), nil},
		{"plain VM passes", &Request{VMID: "vm-1", InfiniBand: true}, onFabric(node("n1"), full), nil},
		{"full", podReq(h100, 1), onFabric(node("n1"), full), &Status{
			Code: NoIPCapacity, Reason: "no free InfiniBand address",
			Message: "InfiniBand fabric ib-1 of node n1 has no free address (2 of 2 held)"}},
	})
}
