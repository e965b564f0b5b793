package placement

import "fmt"

// InfiniBandAddress rejects, for a pod that needs an InfiniBand address, a
// node whose fabric has none free.
type InfiniBandAddress struct{}

func (InfiniBandAddress) Name() string { return "InfiniBandAddress" }

func (InfiniBandAddress) Filter(req *Request, n *NodeInfo) *Status {
	if !NeedsInfiniBand(req, n) {
		return nil
	}
	free, held := n.Fabric.freeAddresses(req.VMID)
	if free > 0 {
		return nil
	}
	return reject(NoIPCapacity, "no free InfiniBand address",
		fmt.Sprintf("InfiniBand fabric %s of node %s has no free address (%d of %d held)",
			n.Fabric.ID, n.Name, held, n.Fabric.IPCapacity))
}
