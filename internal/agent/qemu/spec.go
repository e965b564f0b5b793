package qemu

import (
	"fmt"

	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/agent/supervise"
)

// Actions a Spec carries: a VM has no recreate, a reboot is in place.
const (
	ActionRun    = agentapi.ActionRun
	ActionReboot = agentapi.ActionReboot
	ActionStop   = agentapi.ActionStop
)

// Spec is what the runtime needs to run one VM generation.
type Spec struct {
	ID         string
	Generation int
	Action     string // ActionRun, ActionReboot or ActionStop
	// Image names an entry of Config.Images.
	Image string
	// GPUs are the UUIDs of the GPUs passed through, in index order.
	GPUs     []string
	CPUs     int // vCPUs; 0 is 1
	MemoryGb int // guest memory in GiB (Config.MiBPerGb scales it); 0 is 1
	DiskGb   int // the qcow2's virtual size; 0 is 1
	Volume   Volume
	// SSHPublicKeys go to the guest in its cloud-init seed.
	SSHPublicKeys []string
	// Unsupported, when set, is why this runtime cannot run it (a pod).
	Unsupported string
}

// Volume is the VM's disk: one qcow2 per volume id on the node.
type Volume struct {
	ID string // "" uses the VM's id
	// Fresh: the volume never held data. A disk under ID that this runtime
	// has not used since it started is a leftover and is made anew; one it
	// used is never emptied because of the flag, as the wire says.
	Fresh bool
	// Delete, with ActionStop, removes the disk after the VM is gone.
	Delete bool
}

// Head is what the shared supervisor reads of s.
func (s Spec) Head() supervise.Head {
	return supervise.Head{ID: s.ID, Generation: s.Generation, Action: s.Action, GPUs: s.GPUs}
}

// FromAssignment maps an assignment of the wire to a Spec. An older
// server's assignment (no action) is a run; a recreate (a pod's) of a VM
// is read as a reboot; a pod is not this runtime's.
func FromAssignment(a agentapi.Assignment) Spec {
	s := Spec{ID: a.ID, Generation: a.Generation, Action: a.Action, Image: a.Image, GPUs: a.GPUs,
		CPUs: a.CPUCores, MemoryGb: a.RAMGb, DiskGb: a.DiskSizeGb, SSHPublicKeys: a.SSHPublicKeys}
	switch a.Action {
	case "":
		s.Action = ActionRun
	case agentapi.ActionRecreate:
		s.Action = ActionReboot
	}
	if a.Volume != nil {
		s.Volume = Volume{ID: a.Volume.ID, Fresh: a.Volume.Fresh, Delete: a.Volume.Delete}
		if s.DiskGb == 0 {
			s.DiskGb = a.Volume.SizeGb
		}
	}
	if a.Kind != agentapi.KindVM && s.Action != ActionStop {
		s.Unsupported = fmt.Sprintf("this node's runtime runs VMs only (QEMU); a %s needs a container runtime.", kindName(a.Kind))
	}
	return s
}

func kindName(k string) string {
	if k == "" {
		return "workload of no kind"
	}
	return k
}

// Image is one entry of the node's VM image catalog: a qcow2 base image
// (each VM's disk is a qcow2 with it as backing file, so VMs share one
// copy), or a kernel and initrd booted directly with an empty disk.
type Image struct {
	// Base is the backing qcow2; "" gives an empty disk.
	Base string
	// Kernel, Initrd and Cmdline boot directly (QEMU's -kernel) instead of
	// from the disk; Cmdline gets console=ttyS0 when it names no console.
	Kernel, Initrd, Cmdline string
	// ReadyLine, when set, is a line the guest prints on its serial
	// console once it is up: the VM is booting until it appears, then
	// running. Without one it is running as soon as QEMU runs it.
	ReadyLine string
}
