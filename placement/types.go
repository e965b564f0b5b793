package placement

// NodeState is a node's status as placement reads it. The caller maps the
// stored status onto it; a status it does not map is NodeStateUnknown.
type NodeState int

const (
	NodeStateUnknown NodeState = iota
	NodeStateOnline
	NodeStateOffline
	NodeStateRemoved
)

// Model is a GPU model of the catalog.
type Model struct {
	ID           string
	Name         string // display name, used in messages ("NVIDIA H100 80GB HBM3")
	Manufacturer string // "NVIDIA" or "AMD"
}

// displayName falls back to the id so that a message never names an empty model.
func (m Model) displayName() string {
	if m.Name != "" {
		return m.Name
	}
	return m.ID
}

// Request describes the VM or pod being started.
type Request struct {
	VMID string // the VM's own holdings count as free for it
	// OrganizationID is whose request it is: preemption never stops the
	// organization's own workloads.
	OrganizationID string
	Pod            bool // the request is a pod, not a plain VM
	GPUModel       Model
	GPUCount       int
	// Host resources: only plain VMs hold them, so they are ignored for pods.
	CPUCores, RAMGb, DiskGb int
	// InfiniBand reports that the VM's organization is enabled for
	// InfiniBand; a pod then needs an address when its node is on a fabric.
	InfiniBand bool
}

func (r *Request) kind() string {
	if r.Pod {
		return "pod"
	}
	return "VM"
}

// hostDemand is what the request would hold of the node's CPU, RAM and disk.
func (r *Request) hostDemand() (cpu, ram, disk int) {
	if r.Pod {
		return 0, 0, 0
	}
	return r.CPUCores, r.RAMGb, r.DiskGb
}

// NodeInfo is a snapshot of one node and of what is held on it.
type NodeInfo struct {
	ID, Name     string
	State        NodeState
	Status       string // the stored status, named in the answer when State is NodeStateUnknown
	AgentVersion string // semver of the node agent; see AgentAtLeast
	// Capacity.
	CPUCores, RAMGb, DiskGb int
	GPUs                    []GPU
	// Holdings lists the CPU/RAM/disk held on the node by VMs in running,
	// deploying or interrupted; the requester's own entry, if any, is ignored.
	Holdings []Holding
	// Fabric is the InfiniBand fabric the node is on, nil when none. Nodes
	// on one fabric should share one *Fabric.
	Fabric *Fabric
	// Workloads lists the VMs and pods holding something on the node, for
	// preemption; only Preempt reads it.
	Workloads []Workload
}

// GPU is one GPU of a node.
type GPU struct {
	ID           string
	Index        int
	Address      string // PCI bus id, "0000:3B:00.0"
	ModelID      string
	Healthy      bool   // health == "healthy"; the zero value is failed, the safe side
	FailedReason string // "XID 79"; shown next to the address when set
	HolderID     string // id of the VM or pod holding it, "" when free
}

// heldByOther reports whether someone other than vmID holds the GPU.
func (g *GPU) heldByOther(vmID string) bool {
	return g.HolderID != "" && g.HolderID != vmID
}

// Holding is what one VM holds of a node's host resources.
type Holding struct {
	VMID                    string
	CPUCores, RAMGb, DiskGb int
}

// Fabric is an InfiniBand fabric and the pods holding its addresses.
type Fabric struct {
	ID         string
	IPCapacity int
	Holders    []string // ids of the VMs/pods holding one address each
}

// freeAddresses is the fabric's capacity minus the addresses others hold.
func (f *Fabric) freeAddresses(vmID string) (free, heldByOthers int) {
	for _, h := range f.Holders {
		if h != vmID {
			heldByOthers++
		}
	}
	return f.IPCapacity - heldByOthers, heldByOthers
}

// usedByOthers sums the host resources held by VMs other than vmID.
func (n *NodeInfo) usedByOthers(vmID string) (cpu, ram, disk int) {
	for _, h := range n.Holdings {
		if h.VMID == vmID {
			continue
		}
		cpu += h.CPUCores
		ram += h.RAMGb
		disk += h.DiskGb
	}
	return cpu, ram, disk
}

// NeedsInfiniBand reports whether the request must hold an address of the
// node's fabric: pods of an InfiniBand-enabled organization on a fabric node.
func NeedsInfiniBand(req *Request, n *NodeInfo) bool {
	return req.Pod && req.InfiniBand && n.Fabric != nil
}
