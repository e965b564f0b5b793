package placement

// Fits answers how many copies of req node n could take now, one after
// another: 0 when the filters refuse one (the same filters, in the same
// order, that Place and CheckOwnNode run), else as many as its free GPUs
// of the model and, for a plain VM, its free CPU, RAM and disk hold. It is
// what Place would take on n if asked again after each claim, so a count
// built from it never promises a placement the filters then refuse.
//
// For a pod that needs an InfiniBand address, the fabric's free addresses
// bound the count too; a fabric is shared by its nodes, so summing Fits
// over them can count an address more than once.
func (f *Framework) Fits(req *Request, n *NodeInfo) int {
	if f.CheckOwnNode(req, n) != nil {
		return 0
	}
	k := -1 // no bound yet
	bound := func(free, need int) {
		if need <= 0 {
			return
		}
		if c := max(free, 0) / need; k < 0 || c < k {
			k = c
		}
	}
	bound(countUsableGPUs(req, n), req.GPUCount)
	needCPU, needRAM, needDisk := req.hostDemand()
	usedCPU, usedRAM, usedDisk := n.usedByOthers(req.VMID)
	bound(n.CPUCores-usedCPU, needCPU)
	bound(n.RAMGb-usedRAM, needRAM)
	bound(n.DiskGb-usedDisk, needDisk)
	if NeedsInfiniBand(req, n) {
		free, _ := n.Fabric.freeAddresses(req.VMID)
		bound(free, 1)
	}
	if k < 0 {
		// Asks for nothing that runs out: the filters passed it, and one
		// is all a count can honestly promise.
		return 1
	}
	return k
}
