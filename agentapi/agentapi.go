// Package agentapi is the wire contract between the node agent and the
// server: the JSON bodies of POST /v1/agent/inventory and
// /v1/agent/heartbeat. Both sides import it, so they cannot drift apart,
// and the server does not link NVML to read them.
package agentapi

// InventoryRequest is POSTed to /v1/agent/inventory on start.
type InventoryRequest struct {
	NodeName     string         `json:"nodeName"`
	ClusterID    string         `json:"clusterId"`
	AgentVersion string         `json:"agentVersion"`
	CPUCores     int            `json:"cpuCores"`
	RAMGb        int            `json:"ramGb"`
	DiskGb       int            `json:"diskGb"`
	GPUs         []InventoryGPU `json:"gpus"`
}

// InventoryGPU describes one GPU in an InventoryRequest.
type InventoryGPU struct {
	Index        int    `json:"index"`
	UUID         string `json:"uuid"`
	Address      string `json:"address"`
	Name         string `json:"name"`
	MemoryBytes  uint64 `json:"memoryBytes"`
	Health       string `json:"health"`
	FailedReason string `json:"failedReason,omitempty"`
}

// InventoryResponse is the server's answer to an InventoryRequest.
type InventoryResponse struct {
	NodeID string `json:"nodeId"`
}

// HeartbeatRequest is POSTed to /v1/agent/heartbeat every interval.
type HeartbeatRequest struct {
	NodeName     string         `json:"nodeName"`
	AgentVersion string         `json:"agentVersion"`
	GPUs         []HeartbeatGPU `json:"gpus"`
}

// HeartbeatGPU is one GPU's live state in a HeartbeatRequest.
type HeartbeatGPU struct {
	UUID            string `json:"uuid"`
	Health          string `json:"health"`
	FailedReason    string `json:"failedReason,omitempty"`
	Utilization     int    `json:"utilization"`
	MemoryUsedBytes uint64 `json:"memoryUsedBytes"`
}

// API paths, relative to the server URL.
const (
	InventoryPath = "/v1/agent/inventory"
	HeartbeatPath = "/v1/agent/heartbeat"
)
