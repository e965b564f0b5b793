package placement

// Framework is an ordered list of filters and a score.
type Framework struct {
	// Filters run in order; the first that rejects a node answers for it.
	// The order is the contract's: restarting on a node that is offline and
	// also full answers "offline".
	Filters []Filter
	// Score ranks the nodes that pass every filter; nil means MostAllocated.
	Score func(req *Request, n *NodeInfo) Score
}

// Default returns the filters of the restartVm contract, in its order, and
// the most-allocated score. Add a filter here to have both uses run it.
func Default() *Framework {
	return &Framework{
		Filters: []Filter{
			NodeOnline{},
			InfiniBandAgent{},
			AMDAgent{},
			FreeGPUs{},
			HostResources{},
			InfiniBandAddress{},
		},
		Score: MostAllocated,
	}
}

// CheckOwnNode runs the filters on the node that holds a stopped or failed
// VM's disk (or pod's volume) and returns the first failure, or nil when the
// VM can start there again.
func (f *Framework) CheckOwnNode(req *Request, n *NodeInfo) *Status {
	for _, flt := range f.Filters {
		if st := flt.Filter(req, n); st != nil {
			st.Filter = flt.Name()
			return st
		}
	}
	return nil
}

// Placement is where Place puts a request.
type Placement struct {
	Node   *NodeInfo
	GPUIDs []string // the GPUs to claim, lowest index first
	// InfiniBand reports that the request must claim one address of
	// Node.Fabric.
	InfiniBand bool
	Score      Score
	// Diagnosis records why every other node was rejected, for logs.
	Diagnosis Diagnosis
}

// Place picks the node for a VM or pod whose node was removed: the filters
// reject nodes, the score ranks the rest (ties by node name, then id), and
// the GPUs are picked on the winner. When no node passes, Place answers
// NoCapacity, with Diagnosis.Summary as the message.
func (f *Framework) Place(req *Request, nodes []*NodeInfo) (Placement, *Status) {
	d := Diagnosis{NumAllNodes: len(nodes), Rejected: make(map[string]*Status)}
	score := f.Score
	if score == nil {
		score = MostAllocated
	}
	var best *NodeInfo
	var bestScore Score
	for _, n := range nodes {
		if st := f.CheckOwnNode(req, n); st != nil {
			d.Rejected[n.ID] = st
			continue
		}
		s := score(req, n)
		if best == nil || ranksAbove(s, n, bestScore, best) {
			best, bestScore = n, s
		}
	}
	if best == nil {
		return Placement{Diagnosis: d}, reject(NoCapacity, "", d.Summary())
	}
	return Placement{
		Node:       best,
		GPUIDs:     PickGPUs(req, best),
		InfiniBand: NeedsInfiniBand(req, best),
		Score:      bestScore,
		Diagnosis:  d,
	}, nil
}

// ranksAbove orders candidates: higher score first, then name ascending
// (then id, so that equal names still give one answer).
func ranksAbove(sa Score, a *NodeInfo, sb Score, b *NodeInfo) bool {
	if sb.Less(sa) {
		return true
	}
	if sa.Less(sb) {
		return false
	}
	if a.Name != b.Name {
		return a.Name < b.Name
	}
	return a.ID < b.ID
}
