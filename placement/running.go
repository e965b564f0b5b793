package placement

import "fmt"

// CheckRunning refuses to reboot a running VM or pod on a failed GPU: when
// one of the GPUs it holds on n has failed it answers NodeBusy naming each failed GPU by address, and says whether
// stopping it and starting it again would place it on healthy GPUs of the
// node (healthy GPUs of its model, free or its own, are enough). Nil when
// every GPU it holds is healthy.
func CheckRunning(req *Request, n *NodeInfo) *Status {
	var failed []GPU
	for _, g := range n.GPUs {
		if g.HolderID == req.VMID && req.VMID != "" && !g.Healthy {
			failed = append(failed, g)
		}
	}
	if len(failed) == 0 {
		return nil
	}
	sortByIndex(failed)
	msg := fmt.Sprintf("the %s holds %s on node %s", req.kind(), gpuList("failed", failed), n.Name)
	model := req.GPUModel.displayName()
	if usable := countUsableGPUs(req, n); usable >= req.GPUCount {
		msg += "; stopping it and starting it again would place it on healthy GPUs of its node"
	} else {
		msg += fmt.Sprintf("; the node has %d healthy %s %s free or its own, %d needed",
			usable, model, plural(usable, "GPU", "GPUs"), req.GPUCount)
	}
	st := reject(NodeBusy, "failed GPU", msg)
	st.Filter = "CheckRunning"
	return st
}
