package containerd

import (
	"strconv"
	"strings"

	"gpugraph/agentapi"
)

// Actions a Spec carries. A pod has no reboot: a reboot of a pod is a
// recreate (a new container on the same /workspace).
const (
	ActionRun      = "run"
	ActionRecreate = "recreate"
	ActionStop     = "stop"
)

// StateGone is reported once a stopped workload's container is deleted.
const StateGone = "gone"

// WorkspacePath is where a pod's volume is mounted.
const WorkspacePath = "/workspace"

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
}

// Volume is the host directory mounted at MountPath.
type Volume struct {
	ID        string // "" uses the workload's id
	MountPath string // "" is WorkspacePath
	// Fresh empties the directory before the generation starts: the row
	// moved to this node and its old disk is gone.
	Fresh bool
}

// FromAssignment maps an assignment of the wire to a Spec. Today's wire
// carries only the id, generation and GPUs; what it lacks takes the
// runtime's defaults.
func FromAssignment(a agentapi.Assignment) Spec {
	return Spec{ID: a.ID, Generation: a.Generation, Action: ActionRun, GPUs: a.GPUs}
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
