package placement

import "fmt"

// HostResources rejects, for a plain VM, a node with too little free disk,
// RAM or CPU. Pods hold none of these, so it passes them.
type HostResources struct{}

func (HostResources) Name() string { return "HostResources" }

func (HostResources) Filter(req *Request, n *NodeInfo) *Status {
	needCPU, needRAM, needDisk := req.hostDemand()
	usedCPU, usedRAM, usedDisk := n.usedByOthers(req.VMID)
	freeCPU, freeRAM, freeDisk := n.CPUCores-usedCPU, n.RAMGb-usedRAM, n.DiskGb-usedDisk

	var names, details []string
	short := func(name string, free, need int, unitOne, unitMany string) {
		if need <= free {
			return
		}
		free = max(free, 0) // an over-committed node has nothing free, not less
		names = append(names, name)
		details = append(details, fmt.Sprintf("%s (%d %s free, %d %s needed)",
			name, free, plural(free, unitOne, unitMany), need, plural(need, unitOne, unitMany)))
	}
	// The order of the contract: disk, RAM, CPU.
	short("disk", freeDisk, needDisk, "GB", "GB")
	short("RAM", freeRAM, needRAM, "GB", "GB")
	short("CPU", freeCPU, needCPU, "core", "cores")
	if len(names) == 0 {
		return nil
	}
	return reject(NodeBusy, "too little "+joinAnd(names),
		fmt.Sprintf("node %s has too little free %s", n.Name, joinAnd(details)))
}
