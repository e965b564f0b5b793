package placement

import (
	"cmp"
	"slices"
	"time"
)

// Preemption in the manner of the Kubernetes scheduler's PostFilter: when a
// reserved workload fits nowhere, the caller may stop interruptible
// workloads of other organizations on one node to make room. Preempt is the
// dry run: it proves, with the same filters, that the request fits once the
// victims let go of what they hold, before anything is stopped.

// Workload is a VM or pod holding GPUs, a host share or an address on a
// node, as preemption sees it.
type Workload struct {
	VMID           string
	OrganizationID string
	// Interruptible: its computeClass lets a reserved tenant preempt it.
	Interruptible bool
	// Priority orders the victims: lower is stopped first (the price per
	// hour in cents: the cheapest capacity goes first).
	Priority int
	// CreatedAt breaks priority ties: the newest goes first, having lost
	// the least work.
	CreatedAt time.Time
}

// Preemption is the node Preempt chose and the workloads to stop there.
type Preemption struct {
	Node *NodeInfo
	// Victims are the VM and pod ids to stop, lowest priority first.
	Victims []string
}

// maxExactCandidates bounds the exact search for the fewest victims on one
// node (2^n subsets); a node with more candidates is searched greedily.
const maxExactCandidates = 12

// Preempt chooses, among nodes, the node where stopping the fewest
// preemptable workloads (interruptible, of another organization than req's)
// lets req pass every filter of f; on one node, among sets of that size,
// the one of lowest priorities. Nodes tie on fewer victims, then on the
// lower sum of their priorities, then by name and id. ok is false when no
// node can take req even with every candidate stopped; nothing is changed.
func (f *Framework) Preempt(req *Request, nodes []*NodeInfo) (p Preemption, ok bool) {
	var bestCost int
	for _, n := range nodes {
		victims, fits := f.victimsOn(req, n)
		if !fits {
			continue
		}
		cost := 0
		for _, v := range victims {
			cost += v.Priority
		}
		if ok && !preemptsBetter(len(victims), cost, n, len(p.Victims), bestCost, p.Node) {
			continue
		}
		ids := make([]string, len(victims))
		for i, v := range victims {
			ids[i] = v.VMID
		}
		p, bestCost, ok = Preemption{Node: n, Victims: ids}, cost, true
	}
	return p, ok
}

func preemptsBetter(count, cost int, n *NodeInfo, bestCount, bestCost int, best *NodeInfo) bool {
	if c := cmp.Or(cmp.Compare(count, bestCount), cmp.Compare(cost, bestCost)); c != 0 {
		return c < 0
	}
	if n.Name != best.Name {
		return n.Name < best.Name
	}
	return n.ID < best.ID
}

// Preemptable lists n's workloads that req may stop, lowest priority first.
func Preemptable(req *Request, n *NodeInfo) []Workload {
	var out []Workload
	for _, w := range n.Workloads {
		if w.Interruptible && w.OrganizationID != req.OrganizationID && w.VMID != req.VMID {
			out = append(out, w)
		}
	}
	slices.SortFunc(out, func(a, b Workload) int {
		return cmp.Or(cmp.Compare(a.Priority, b.Priority), b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(a.VMID, b.VMID))
	})
	return out
}

// victimsOn finds the fewest candidates of n whose stopping lets req pass;
// fits is false when even stopping all of them does not.
func (f *Framework) victimsOn(req *Request, n *NodeInfo) (victims []Workload, fits bool) {
	cands := Preemptable(req, n)
	passes := func(vs []Workload) bool { return f.CheckOwnNode(req, Without(n, vs)) == nil }
	if !passes(cands) {
		return nil, false
	}
	if len(cands) > maxExactCandidates {
		return reprieve(cands, passes), true
	}
	// Sizes in increasing order, and within a size the combinations in
	// lexicographic order of the priority-sorted list: the first that
	// passes is the fewest victims, lowest priorities first.
	for k := 0; k <= len(cands); k++ {
		var found []Workload
		combinations(len(cands), k, func(idx []int) bool {
			vs := make([]Workload, len(idx))
			for i, j := range idx {
				vs[i] = cands[j]
			}
			if passes(vs) {
				found = vs
				return false
			}
			return true
		})
		if found != nil {
			return found, true
		}
	}
	return cands, true // unreachable: k = len(cands) passes
}

// reprieve is the Kubernetes scheduler's search for many candidates: from
// all of them stopped, give back the highest-priority ones that are not
// needed, one at a time.
func reprieve(cands []Workload, passes func([]Workload) bool) []Workload {
	victims := slices.Clone(cands)
	for i := len(cands) - 1; i >= 0; i-- {
		trial := slices.DeleteFunc(slices.Clone(victims), func(w Workload) bool { return w.VMID == cands[i].VMID })
		if passes(trial) {
			victims = trial
		}
	}
	return victims
}

// combinations calls visit with each k-subset of 0..n-1 in lexicographic
// order until visit answers false.
func combinations(n, k int, visit func([]int) bool) {
	idx := make([]int, k)
	for i := range idx {
		idx[i] = i
	}
	for {
		if !visit(idx) {
			return
		}
		i := k - 1
		for i >= 0 && idx[i] == n-k+i {
			i--
		}
		if i < 0 {
			return
		}
		idx[i]++
		for j := i + 1; j < k; j++ {
			idx[j] = idx[j-1] + 1
		}
	}
}

// Without is n as it would be once victims let go of what they hold: their
// GPUs free, their host shares and fabric addresses gone. n is not changed.
func Without(n *NodeInfo, victims []Workload) *NodeInfo {
	if len(victims) == 0 {
		return n
	}
	gone := make(map[string]bool, len(victims))
	for _, v := range victims {
		gone[v.VMID] = true
	}
	out := *n
	out.GPUs = slices.Clone(n.GPUs)
	for i := range out.GPUs {
		if gone[out.GPUs[i].HolderID] {
			out.GPUs[i].HolderID = ""
		}
	}
	out.Holdings = slices.DeleteFunc(slices.Clone(n.Holdings), func(h Holding) bool { return gone[h.VMID] })
	out.Workloads = slices.DeleteFunc(slices.Clone(n.Workloads), func(w Workload) bool { return gone[w.VMID] })
	if n.Fabric != nil {
		fab := *n.Fabric
		fab.Holders = slices.DeleteFunc(slices.Clone(n.Fabric.Holders), func(id string) bool { return gone[id] })
		out.Fabric = &fab
	}
	return &out
}
