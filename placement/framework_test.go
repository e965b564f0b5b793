package placement

import (
	"reflect"
	"testing"
)

func TestCheckOwnNodeOrder(t *testing.T) {
	ib := &Fabric{ID: "ib-1", IPCapacity: 1, Holders: []string{"other"}}
	tests := []struct {
		name   string
		req    *Request
		node   *NodeInfo
		filter string
		code   Code
	}{
		{"offline beats no GPUs", vmReq(2), withStatus(hold(node("n1"), "other", 0, 1, 2, 3, 4, 5, 6, 7), NodeStateOffline),
			"NodeOnline", NodeOffline},
		{"offline pod beats old agent", podReq(mi300, 1), onFabric(withAgent(withStatus(node("n1"), NodeStateOffline), "2.0.0"), ib),
			"NodeOnline", NodeOffline},
		{"InfiniBand agent beats AMD agent", podReq(mi300, 1), onFabric(withAgent(node("n1"), "2.3.0"), ib),
			"InfiniBandAgent", NoInfiniBand},
		{"AMD agent beats GPUs", podReq(mi300, 1), onFabric(withAgent(node("n1"), "2.5.0"), ib),
			"AMDAgent", NoAMDGrant},
		{"GPUs beat host resources", vmReq(8), holding(hold(node("n1"), "other", 0), Holding{VMID: "other", RAMGb: 2048}),
			"FreeGPUs", NodeBusy},
		{"host resources", vmReq(1), holding(node("n1"), Holding{VMID: "other", RAMGb: 2048}),
			"HostResources", NodeBusy},
		{"GPUs beat InfiniBand address", podReq(h100, 8), onFabric(hold(node("n1"), "other", 0), ib),
			"FreeGPUs", NodeBusy},
		{"InfiniBand address last", podReq(h100, 8), onFabric(node("n1"), ib),
			"InfiniBandAddress", NoIPCapacity},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := Default().CheckOwnNode(tt.req, tt.node)
			if st == nil {
				t.Fatal("CheckOwnNode passed")
			}
			if st.Filter != tt.filter || st.Code != tt.code {
				t.Errorf("got %s %s, want %s %s", st.Filter, st.Code, tt.filter, tt.code)
			}
		})
	}
}

func TestCheckOwnNodeFullMessage(t *testing.T) {
	n := fail(hold(node("gpu-node-1"), "other", 0, 1, 2, 3, 4, 5), 6)
	st := Default().CheckOwnNode(vmReq(2), n)
	want := &Status{Filter: "FreeGPUs", Code: NodeBusy, Reason: "too few free NVIDIA H100 GPUs",
		Message: "node gpu-node-1 has 1 free NVIDIA H100 GPU, 2 needed; failed GPU 0000:78:00.0 (XID 79)"}
	if !reflect.DeepEqual(st, want) {
		t.Errorf("CheckOwnNode:\n got %+v\nwant %+v", st, want)
	}
	if st.Error() != want.Message {
		t.Errorf("Error() = %q", st.Error())
	}
}

func TestCheckOwnNodePasses(t *testing.T) {
	n := onFabric(hold(node("n1"), "other", 0, 1), &Fabric{ID: "ib-1", IPCapacity: 4, Holders: []string{"other"}})
	if st := Default().CheckOwnNode(podReq(h100, 6), n); st != nil {
		t.Errorf("pod: %v", st)
	}
	if st := Default().CheckOwnNode(vmReq(6), n); st != nil {
		t.Errorf("VM: %v", st)
	}
}

// stubFilter shows that a filter added to the slice runs in both uses.
type stubFilter struct{}

func (stubFilter) Name() string { return "Maintenance" }
func (stubFilter) Filter(_ *Request, n *NodeInfo) *Status {
	if n.Name == "n2" {
		return reject(NodeBusy, "in maintenance", "node n2 is in maintenance")
	}
	return nil
}

func TestAddedFilterRunsInBothUses(t *testing.T) {
	f := Default()
	f.Filters = append(f.Filters, stubFilter{})
	if st := f.CheckOwnNode(vmReq(1), node("n2")); st == nil || st.Filter != "Maintenance" {
		t.Errorf("CheckOwnNode = %+v", st)
	}
	_, st := f.Place(vmReq(1), []*NodeInfo{node("n2"), withStatus(node("n3"), NodeStateOffline)})
	if st == nil || st.Message != "0/2 nodes can take it: 1 in maintenance, 1 offline" {
		t.Errorf("Place = %+v", st)
	}
}
