package containerd

import (
	"strconv"
	"strings"

	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/agent/supervise"
)

// Actions a Spec carries. A pod has no reboot: a reboot of a pod is a
// recreate (a new container on the same /workspace).
const (
	ActionRun      = agentapi.ActionRun
	ActionRecreate = agentapi.ActionRecreate
	ActionStop     = agentapi.ActionStop
)

// StateGone is reported once a stopped workload's container is deleted.
const StateGone = agentapi.StateGone

// WorkspacePath is where a pod's volume is mounted.
const WorkspacePath = agentapi.WorkspaceMount

// Spec is what the runtime needs to run one pod.
type Spec struct {
	ID         string
	Generation int
	Action     string // ActionRun, ActionRecreate or ActionStop
	Image      string
	GPUs       []string // UUIDs
	// CPUs is the CPU share in cores, enforced as a CFS quota; 0 leaves it
	// unlimited.
	CPUs float64
	// MemoryBytes is the memory limit; 0 leaves it unlimited.
	MemoryBytes uint64
	Volume      Volume
	// Args replace the image's command when set.
	Args []string
	// Unsupported, when set, is why this runtime cannot run it (a VM).
	Unsupported string
}

// Volume is the host directory mounted at MountPath.
type Volume struct {
	ID        string // "" uses the workload's id
	MountPath string // "" is WorkspacePath
	// Fresh: the volume never held data (the row moved here and its old
	// disk is gone). A directory under ID that this runtime has not
	// mounted since it started is a leftover and is emptied; one it
	// mounted is never emptied because of the flag, as the wire says.
	Fresh bool
	// Delete, with ActionStop, removes the directory after the teardown.
	Delete bool
}

// Head is what the shared supervisor reads of s.
func (s Spec) Head() supervise.Head {
	return supervise.Head{ID: s.ID, Generation: s.Generation, Action: s.Action, GPUs: s.GPUs}
}

// FromAssignment maps an assignment of the wire to a Spec. An older
// server's assignment (no action, no image, no volume) is a run of the
// runtime's default image. A pod has no reboot: a reboot is a recreate.
func FromAssignment(a agentapi.Assignment) Spec {
	s := Spec{ID: a.ID, Generation: a.Generation, Action: a.Action, Image: a.Image, GPUs: a.GPUs,
		CPUs: float64(a.CPUCores), MemoryBytes: uint64(a.RAMGb) << 30}
	switch a.Action {
	case "":
		s.Action = ActionRun
	case agentapi.ActionReboot:
		s.Action = ActionRecreate
	}
	if a.Volume != nil {
		s.Volume = Volume{ID: a.Volume.ID, MountPath: a.Volume.MountPath, Fresh: a.Volume.Fresh, Delete: a.Volume.Delete}
	}
	if a.Kind == agentapi.KindVM && s.Action != ActionStop {
		s.Unsupported = "this node's runtime runs pods only (containerd); a VM needs a hypervisor runtime."
	}
	return s
}

// env is what the container is given to see its GPUs the way NVIDIA's
// container toolkit reads it: NVIDIA_VISIBLE_DEVICES lists the UUIDs, or
// is "void" for none, so an image that sets it to "all" (CUDA's do)
// still gets no GPU it was not assigned.
func (s Spec) env() []string {
	v := "void"
	if len(s.GPUs) > 0 {
		v = strings.Join(s.GPUs, ",")
	}
	return []string{"NVIDIA_VISIBLE_DEVICES=" + v, "GPUGRAPH_WORKLOAD_ID=" + s.ID, "GPUGRAPH_GENERATION=" + strconv.Itoa(s.Generation)}
}

// CDIAnnotation is the annotation key that names the container's devices
// in CDI's form (nvidia.com/gpu=UUID), which nvidia-container-runtime in
// its cdi mode reads.
const CDIAnnotation = "cdi.k8s.io/gpugraph"

func (s Spec) annotations() map[string]string {
	if len(s.GPUs) == 0 {
		return nil
	}
	names := make([]string, len(s.GPUs))
	for i, u := range s.GPUs {
		names[i] = "nvidia.com/gpu=" + u
	}
	return map[string]string{CDIAnnotation: strings.Join(names, ",")}
}
