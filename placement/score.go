package placement

// Score ranks nodes that can take a request; higher is better. Fields are
// compared in order, so GPU packing decides and host packing only breaks ties.
type Score struct {
	// GPU is the fraction of the node's healthy GPUs (all models) held once
	// the request is placed: (held by others + requested) / healthy.
	GPU float64
	// Host is the mean of the CPU and RAM fractions held once the request is
	// placed: (held by others + requested) / capacity, over the dimensions
	// the node has. Pods hold no CPU or RAM and add nothing.
	Host float64
}

// Less reports whether s ranks below o.
func (s Score) Less(o Score) bool {
	if s.GPU != o.GPU {
		return s.GPU < o.GPU
	}
	return s.Host < o.Host
}

// MostAllocated prefers the node that is fullest after placing the request
// (Kubernetes' MostAllocated strategy), so that whole empty nodes stay free
// for large requests instead of being nibbled at by small ones. Failed GPUs
// are not capacity anyone can use, so they are left out of the fraction.
func MostAllocated(req *Request, n *NodeInfo) Score {
	var s Score
	healthy, held := 0, 0
	for i := range n.GPUs {
		g := &n.GPUs[i]
		if !g.Healthy {
			continue
		}
		healthy++
		if g.heldByOther(req.VMID) {
			held++
		}
	}
	if healthy > 0 {
		s.GPU = float64(held+max(req.GPUCount, 0)) / float64(healthy)
	}

	needCPU, needRAM, _ := req.hostDemand()
	usedCPU, usedRAM, _ := n.usedByOthers(req.VMID)
	sum, dims := 0.0, 0
	if n.CPUCores > 0 {
		sum += float64(usedCPU+needCPU) / float64(n.CPUCores)
		dims++
	}
	if n.RAMGb > 0 {
		sum += float64(usedRAM+needRAM) / float64(n.RAMGb)
		dims++
	}
	if dims > 0 {
		s.Host = sum / float64(dims)
	}
	return s
}
