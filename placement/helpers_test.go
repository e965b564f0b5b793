package placement

import "fmt"

var (
	h100  = Model{ID: "h100-80gb", Name: "NVIDIA H100", Manufacturer: "NVIDIA"}
	a100  = Model{ID: "a100-80gb", Name: "NVIDIA A100", Manufacturer: "NVIDIA"}
	mi300 = Model{ID: "mi300x", Name: "AMD Instinct MI300X", Manufacturer: "AMD"}
)

// gpus builds count healthy free GPUs of a model at indexes 0..count-1,
// with addresses 0000:1X:00.0 so tests can name them.
func gpus(node string, m Model, count int) []GPU {
	out := make([]GPU, count)
	for i := range out {
		out[i] = GPU{
			ID:      fmt.Sprintf("%s-g%d", node, i),
			Index:   i,
			Address: fmt.Sprintf("0000:%X:00.0", 0x18+i*0x10),
			ModelID: m.ID,
			Healthy: true,
		}
	}
	return out
}

// node is an online 8×H100 node with 128 cores, 2048 GB RAM, 30000 GB disk.
func node(name string) *NodeInfo {
	return &NodeInfo{
		ID: "id-" + name, Name: name, State: NodeStateOnline, AgentVersion: "2.6.1",
		CPUCores: 128, RAMGb: 2048, DiskGb: 30000,
		GPUs: gpus(name, h100, 8),
	}
}

// vmReq is a plain VM asking for count H100s, 16 cores, 128 GB RAM, 500 GB disk.
func vmReq(count int) *Request {
	return &Request{VMID: "vm-1", GPUModel: h100, GPUCount: count, CPUCores: 16, RAMGb: 128, DiskGb: 500}
}

// podReq is a pod of an InfiniBand-enabled organization.
func podReq(m Model, count int) *Request {
	return &Request{VMID: "pod-1", Pod: true, GPUModel: m, GPUCount: count, InfiniBand: true}
}

// hold marks GPUs at the given indexes as held by holder.
func hold(n *NodeInfo, holder string, idx ...int) *NodeInfo {
	for _, i := range idx {
		n.GPUs[i].HolderID = holder
	}
	return n
}

// fail marks GPUs at the given indexes as failed with XID 79.
func fail(n *NodeInfo, idx ...int) *NodeInfo {
	for _, i := range idx {
		n.GPUs[i].Healthy = false
		n.GPUs[i].FailedReason = "XID 79"
	}
	return n
}
