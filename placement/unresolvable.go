package placement

import "fmt"

// Unresolvable answers Unschedulable when no node of nodes could ever hold
// req: none has as many GPUs of its model in all (healthy or not, held or
// free), or, for a plain VM, none of those has the CPU, RAM and disk it asks
// for in all. A removed node counts for nothing; an offline one counts, as it
// may come back, and so does an agent too old for the request, which an
// upgrade fixes. It answers nil when some node could hold req once enough
// stops, heals or comes back: waiting may help, so the request may queue.
// where names the nodes in the message ("of the fleet", "of cluster x").
func Unresolvable(req *Request, nodes []*NodeInfo, where string) *Status {
	model := req.GPUModel.displayName()
	needCPU, needRAM, needDisk := req.hostDemand()
	most, live := 0, 0
	var bigCPU, bigRAM, bigDisk int
	for _, n := range nodes {
		if n.State == NodeStateRemoved {
			continue
		}
		live++
		gpus := 0
		for i := range n.GPUs {
			if req.GPUCount > 0 && n.GPUs[i].ModelID == req.GPUModel.ID {
				gpus++
			}
		}
		most = max(most, gpus)
		if gpus < req.GPUCount {
			continue
		}
		if n.CPUCores >= needCPU && n.RAMGb >= needRAM && n.DiskGb >= needDisk {
			return nil
		}
		bigCPU, bigRAM, bigDisk = max(bigCPU, n.CPUCores), max(bigRAM, n.RAMGb), max(bigDisk, n.DiskGb)
	}
	var msg string
	switch {
	case live == 0:
		msg = fmt.Sprintf("no node %s could ever hold it: there is no node %s", where, where)
	case most == 0 && req.GPUCount > 0:
		msg = fmt.Sprintf("no node %s has %s GPUs", where, model)
	case most < req.GPUCount:
		msg = fmt.Sprintf("no node %s has %d %s GPUs: the most one node has is %d",
			where, req.GPUCount, model, most)
	default:
		msg = fmt.Sprintf("no node %s with %d %s %s has %d CPU %s, %d GB of RAM and %d GB of disk in all: the largest has %d, %d GB and %d GB",
			where, req.GPUCount, model, plural(req.GPUCount, "GPU", "GPUs"), needCPU, plural(needCPU, "core", "cores"),
			needRAM, needDisk, bigCPU, bigRAM, bigDisk)
	}
	return reject(Unschedulable, "never fits", msg)
}
