package placement

import (
	"fmt"
	"reflect"
	"testing"
)

func TestPlacePrefersMostAllocated(t *testing.T) {
	empty := node("empty")
	half := hold(node("half"), "other", 0, 1, 2, 3)
	almost := hold(node("almost"), "other", 0, 1, 2, 3, 4, 5)
	p, st := Default().Place(vmReq(2), []*NodeInfo{empty, half, almost})
	if st != nil {
		t.Fatalf("Place: %v", st)
	}
	if p.Node != almost {
		t.Errorf("Place chose %s, want almost (fills it to 8/8)", p.Node.Name)
	}
	if want := []string{"almost-g6", "almost-g7"}; !reflect.DeepEqual(p.GPUIDs, want) {
		t.Errorf("GPUIDs = %v, want %v", p.GPUIDs, want)
	}
	if p.Score.GPU != 1 || p.InfiniBand {
		t.Errorf("Score = %+v, InfiniBand = %v; want GPU 1, false", p.Score, p.InfiniBand)
	}
}

func TestPlaceHostPackingBreaksGPUTies(t *testing.T) {
	busy := holding(node("z-busy"), Holding{VMID: "other", CPUCores: 64, RAMGb: 1024})
	idle := node("a-idle")
	p, st := Default().Place(vmReq(1), []*NodeInfo{idle, busy})
	if st != nil || p.Node != busy {
		t.Fatalf("Place = %v, %v; want z-busy", p.Node, st)
	}
}

func TestPlaceTieBreaksByName(t *testing.T) {
	nodes := []*NodeInfo{node("gpu-c"), node("gpu-a"), node("gpu-b")}
	p, st := Default().Place(vmReq(1), nodes)
	if st != nil || p.Node.Name != "gpu-a" {
		t.Fatalf("Place = %v, %v; want gpu-a", p.Node, st)
	}
	// Equal names fall back to the id, so the answer never depends on order.
	x, y := node("same"), node("same")
	x.ID, y.ID = "id-2", "id-1"
	p, _ = Default().Place(vmReq(1), []*NodeInfo{x, y})
	if p.Node.ID != "id-1" {
		t.Errorf("Place chose %s, want id-1", p.Node.ID)
	}
}

// The contract's example, 12 nodes: 7 too few H100s, 3 offline, 2 short of RAM.
func TestPlaceNoCapacitySummary(t *testing.T) {
	var nodes []*NodeInfo
	for i := range 7 {
		nodes = append(nodes, hold(node(fmt.Sprintf("busy-%d", i)), "other", 0, 1, 2, 3, 4, 5, 6))
	}
	for i := range 3 {
		// Offline and full: counted once, as offline, its first failure.
		nodes = append(nodes, withStatus(hold(node(fmt.Sprintf("off-%d", i)), "other", 0, 1, 2, 3, 4, 5, 6, 7), NodeStateOffline))
	}
	for i := range 2 {
		nodes = append(nodes, holding(node(fmt.Sprintf("ram-%d", i)), Holding{VMID: "other", RAMGb: 2000}))
	}
	p, st := Default().Place(vmReq(2), nodes)
	want := &Status{Code: NoCapacity,
		Message: "0/12 nodes can take it: 7 too few free NVIDIA H100 GPUs, 3 offline, 2 too little RAM"}
	if !reflect.DeepEqual(st, want) {
		t.Fatalf("Place status:\n got %+v\nwant %+v", st, want)
	}
	if p.Node != nil || p.Diagnosis.NumAllNodes != 12 || len(p.Diagnosis.Rejected) != 12 {
		t.Errorf("Placement = %+v", p)
	}
	if r := p.Diagnosis.Rejected["id-off-0"]; r.Filter != "NodeOnline" || r.Message != "node off-0 is offline; try again when it is back online" {
		t.Errorf("Rejected[id-off-0] = %+v", r)
	}
}

// A pod fleet touching every filter; equal counts order by text.
func TestPlaceNoCapacityPodFleet(t *testing.T) {
	full := &Fabric{ID: "ib-1", IPCapacity: 1, Holders: []string{"other"}}
	open := &Fabric{ID: "ib-2", IPCapacity: 8}
	nodes := []*NodeInfo{
		withStatus(node("gone-1"), NodeStateRemoved),
		withStatus(node("gone-2"), NodeStateRemoved),
		withStatus(node("off-1"), NodeStateOffline),
		onFabric(withAgent(node("old-ib"), "2.3.0"), open),
		withAgent(node("old-amd-1"), "2.5.0"),
		withAgent(node("old-amd-2"), "v2.6.0-beta.1"),
		node("nvidia-only"),
		onFabric(withGPUs(node("ib-full"), gpus("ib-full", mi300, 8)), full),
	}
	_, st := Default().Place(podReq(mi300, 4), nodes)
	want := &Status{Code: NoCapacity,
		Message: "0/8 nodes can take it: 2 agent too old for AMD GPUs, 2 removed, " +
			"1 agent too old for InfiniBand, 1 no free InfiniBand address, 1 offline, 1 too few free AMD Instinct MI300X GPUs"}
	if !reflect.DeepEqual(st, want) {
		t.Fatalf("Place status:\n got %+v\nwant %+v", st, want)
	}

	// Free one address and the IB node takes it, claiming an address.
	full.IPCapacity = 2
	p, st := Default().Place(podReq(mi300, 4), nodes)
	if st != nil || p.Node.Name != "ib-full" || !p.InfiniBand {
		t.Fatalf("Place = %+v, %v; want ib-full with an InfiniBand address", p, st)
	}
	if want := []string{"ib-full-g0", "ib-full-g1", "ib-full-g2", "ib-full-g3"}; !reflect.DeepEqual(p.GPUIDs, want) {
		t.Errorf("GPUIDs = %v, want %v", p.GPUIDs, want)
	}
}

func TestPlaceNoNodes(t *testing.T) {
	_, st := Default().Place(vmReq(1), nil)
	if st == nil || st.Message != "0/0 nodes can take it" || st.Code != NoCapacity {
		t.Fatalf("Place(no nodes) = %+v", st)
	}
}

func TestPlaceDoesNotModifySnapshot(t *testing.T) {
	n := hold(node("n1"), "other", 0)
	before := fmt.Sprintf("%+v", *n)
	if _, st := Default().Place(vmReq(2), []*NodeInfo{n}); st != nil {
		t.Fatal(st)
	}
	if after := fmt.Sprintf("%+v", *n); after != before {
		t.Errorf("snapshot changed:\n%s\n%s", before, after)
	}
}
