package placement

import (
	"cmp"
	"slices"
)

// usable reports whether g can be claimed by req: healthy, of its model,
// and free or already its own.
func usable(req *Request, g *GPU) bool {
	return g.Healthy && g.ModelID == req.GPUModel.ID && !g.heldByOther(req.VMID)
}

// countUsableGPUs counts the GPUs of the node that req could claim.
func countUsableGPUs(req *Request, n *NodeInfo) int {
	c := 0
	for i := range n.GPUs {
		if usable(req, &n.GPUs[i]) {
			c++
		}
	}
	return c
}

// failedGPUs lists the node's failed GPUs of the model, lowest index first.
func failedGPUs(modelID string, n *NodeInfo) []GPU {
	var out []GPU
	for _, g := range n.GPUs {
		if !g.Healthy && g.ModelID == modelID {
			out = append(out, g)
		}
	}
	sortByIndex(out)
	return out
}

func sortByIndex(gpus []GPU) {
	slices.SortFunc(gpus, func(a, b GPU) int { return cmp.Or(cmp.Compare(a.Index, b.Index), cmp.Compare(a.ID, b.ID)) })
}

// PickGPUs chooses the GPUs req claims on n: healthy, of its model, free or
// its own, lowest index first. It returns their ids, or nil when the node has
// too few (the GPU filter answers why) or the request needs none.
func PickGPUs(req *Request, n *NodeInfo) []string {
	if req.GPUCount <= 0 {
		return nil
	}
	var cands []GPU
	for i := range n.GPUs {
		if usable(req, &n.GPUs[i]) {
			cands = append(cands, n.GPUs[i])
		}
	}
	if len(cands) < req.GPUCount {
		return nil
	}
	sortByIndex(cands)
	ids := make([]string, req.GPUCount)
	for i := range ids {
		ids[i] = cands[i].ID
	}
	return ids
}
