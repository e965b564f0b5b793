package placement

import (
	"slices"
	"testing"
	"time"
)

// spot adds an interruptible workload of org holding GPUs idx of n.
func spot(n *NodeInfo, id, org string, price int, idx ...int) *NodeInfo {
	hold(n, id, idx...)
	n.Workloads = append(n.Workloads, Workload{VMID: id, OrganizationID: org, Interruptible: true, Priority: price,
		CreatedAt: time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)})
	return n
}

// reserved adds a workload that is not interruptible.
func reservedOn(n *NodeInfo, id, org string, idx ...int) *NodeInfo {
	hold(n, id, idx...)
	n.Workloads = append(n.Workloads, Workload{VMID: id, OrganizationID: org, Priority: 1})
	return n
}

func reservedPod(count int) *Request {
	r := podReq(h100, count)
	r.OrganizationID = "org-a"
	return r
}

func TestPreemptChoosesTheFewestVictims(t *testing.T) {
	// 8 GPUs, GPU 7 failed: 7 usable. The pod needs 2.
	n := fail(node("n1"), 7)
	reservedOn(n, "own", "org-a", 0)    // the requester's organization: never a victim
	spot(n, "cheap-1", "org-b", 10, 1)  // one GPU each, cheapest
	spot(n, "cheap-2", "org-b", 20, 2)  //
	spot(n, "big", "org-c", 500, 3, 4)  // two GPUs: alone it makes room
	reservedOn(n, "res", "org-c", 5, 6) // not interruptible: never a victim
	p, ok := Default().Preempt(reservedPod(2), []*NodeInfo{n})
	if !ok || !slices.Equal(p.Victims, []string{"big"}) {
		t.Fatalf("preempt: %v %+v, want the one victim that frees two GPUs", ok, p.Victims)
	}
}

func TestPreemptStopsLowestPriorityFirst(t *testing.T) {
	n := node("n1")
	reservedOn(n, "res", "org-c", 0, 1, 2, 3, 4, 5)
	spot(n, "dear", "org-b", 900, 6)
	spot(n, "cheap", "org-b", 100, 7)
	p, ok := Default().Preempt(reservedPod(1), []*NodeInfo{n})
	if !ok || !slices.Equal(p.Victims, []string{"cheap"}) {
		t.Fatalf("preempt: %v %+v, want the cheapest", ok, p.Victims)
	}
}

func TestPreemptNeverTheOwnOrganizationNorReserved(t *testing.T) {
	n := node("n1")
	spot(n, "mine", "org-a", 1, 0, 1, 2, 3) // interruptible, but the requester's own
	reservedOn(n, "res", "org-c", 4, 5, 6, 7)
	if p, ok := Default().Preempt(reservedPod(1), []*NodeInfo{n}); ok {
		t.Fatalf("preempted %+v: only the own organization's and reserved workloads hold GPUs", p.Victims)
	}
}

func TestPreemptNothingWhenEvenAllVictimsDoNotMakeRoom(t *testing.T) {
	n := node("n1")
	reservedOn(n, "res", "org-c", 0, 1, 2, 3, 4, 5, 6)
	spot(n, "spot", "org-b", 1, 7)
	if p, ok := Default().Preempt(reservedPod(2), []*NodeInfo{n}); ok {
		t.Fatalf("preempted %+v though only one GPU could be freed", p.Victims)
	}
}

func TestPreemptPrefersTheNodeWithFewerVictims(t *testing.T) {
	a := node("a")
	reservedOn(a, "res-a", "org-c", 0, 1, 2, 3, 4, 5)
	spot(a, "a1", "org-b", 1, 6)
	spot(a, "a2", "org-b", 1, 7)
	b := node("b")
	reservedOn(b, "res-b", "org-c", 0, 1, 2, 3, 4, 5)
	spot(b, "b1", "org-b", 900, 6, 7)
	p, ok := Default().Preempt(reservedPod(2), []*NodeInfo{a, b})
	if !ok || p.Node.Name != "b" || !slices.Equal(p.Victims, []string{"b1"}) {
		t.Fatalf("preempt: %v on %v %+v, want b1 on b", ok, p.Node, p.Victims)
	}
}

// The dry run frees what the victims hold of the host (plain VMs) and of
// the fabric (pods), and leaves the snapshot as it was.
func TestWithoutFreesHostSharesAndAddresses(t *testing.T) {
	n := node("n1")
	n.Fabric = &Fabric{ID: "ib", IPCapacity: 1, Holders: []string{"spot"}}
	spot(n, "spot", "org-b", 1, 0)
	n.Holdings = []Holding{{VMID: "spot", CPUCores: 100}}
	w := Without(n, n.Workloads)
	if w.GPUs[0].HolderID != "" || len(w.Holdings) != 0 || len(w.Fabric.Holders) != 0 {
		t.Fatalf("without: %+v", w)
	}
	if n.GPUs[0].HolderID != "spot" || len(n.Holdings) != 1 || len(n.Fabric.Holders) != 1 {
		t.Fatal("Without changed its input")
	}
	p, ok := Default().Preempt(reservedPod(8), []*NodeInfo{n})
	if !ok || !slices.Equal(p.Victims, []string{"spot"}) {
		t.Fatalf("pod needing the fabric's one address: %v %+v", ok, p.Victims)
	}
}

func TestCombinationsInLexicographicOrder(t *testing.T) {
	var got [][]int
	combinations(4, 2, func(idx []int) bool { got = append(got, slices.Clone(idx)); return true })
	want := [][]int{{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("combinations: %v", got)
	}
}
