package agent

import (
	"cmp"
	"os"
	"slices"

	"gpugraph/internal/agent/agentapi"
)

// Dispatch is the Runtime of a node that runs both kinds: VMs go to one
// runtime (QEMU), pods to the other (containerd). Each sees only its own
// kind, so each keeps its own rules (stages, teardown, the GPU ordering
// rule among its workloads) as when it runs alone; Report is both
// reports, by id. An assignment of no kind (an older server's) is a pod,
// as the containerd runtime reads it.
//
// The ordering rule is kept within each side, not across them: a GPU
// passed to a VM is bound to vfio-pci and one a pod uses to nvidia, so one
// GPU does not move between a VM and a pod unless its operator rebinds
// it, or the QEMU runtime does (--qemu-vfio-rebind): it takes a GPU only
// at a VM's start (the server's placement holds a GPU for one workload
// at a time) and gives it back once that VM is gone.
type Dispatch struct {
	VMs, Pods Runtime
}

// Assign implements Runtime: each side gets its kind's list, every time
// (an empty one too, so a side stops what is no longer listed).
func (d Dispatch) Assign(as []agentapi.Assignment) {
	var vms, pods []agentapi.Assignment
	for _, a := range as {
		if a.Kind == agentapi.KindVM {
			vms = append(vms, a)
		} else {
			pods = append(pods, a)
		}
	}
	d.VMs.Assign(vms)
	d.Pods.Assign(pods)
}

// Report implements Runtime.
func (d Dispatch) Report() []agentapi.WorkloadReport {
	out := append(d.VMs.Report(), d.Pods.Report()...)
	slices.SortStableFunc(out, func(a, b agentapi.WorkloadReport) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// ConsoleTail answers what the VM side's ConsoleTail answers for VM id,
// so a Dispatch offers the same optional reading as the VM runtime alone.
func (d Dispatch) ConsoleTail(id string) ([]byte, error) {
	if c, ok := d.VMs.(ConsoleReader); ok {
		return c.ConsoleTail(id)
	}
	return nil, os.ErrNotExist
}

// PassedThroughGPUs answers what the VM side passed through, so a
// Dispatch offers the same optional reading as the VM runtime alone.
func (d Dispatch) PassedThroughGPUs() []GPUIdentity {
	if p, ok := d.VMs.(PassthroughRuntime); ok {
		return p.PassedThroughGPUs()
	}
	return nil
}
