package placement

import "fmt"

// FreeGPUs rejects a node with too few healthy GPUs of the request's model
// that are free (or its own).
type FreeGPUs struct{}

func (FreeGPUs) Name() string { return "FreeGPUs" }

func (FreeGPUs) Filter(req *Request, n *NodeInfo) *Status {
	if req.GPUCount <= 0 {
		return nil
	}
	free := countUsableGPUs(req, n)
	if free >= req.GPUCount {
		return nil
	}
	model := req.GPUModel.displayName()
	msg := fmt.Sprintf("node %s has %d free %s %s, %d needed",
		n.Name, free, model, plural(free, "GPU", "GPUs"), req.GPUCount)
	// Naming the failed ones tells the user whether waiting can help.
	if failed := failedGPUs(req.GPUModel.ID, n); len(failed) > 0 {
		msg += "; " + gpuList("failed", failed)
	}
	return reject(NodeBusy, "too few free "+model+" GPUs", msg)
}
