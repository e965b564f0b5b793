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
	// Sequence grows with every report the agent sends (Sequence below).
	Sequence int64 `json:"sequence,omitempty"`
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
type InventoryResponse = ReportResponse

// HeartbeatResponse is the server's answer to a HeartbeatRequest.
type HeartbeatResponse = ReportResponse

// HeartbeatRequest is POSTed to /v1/agent/heartbeat every interval.
type HeartbeatRequest struct {
	NodeName     string         `json:"nodeName"`
	AgentVersion string         `json:"agentVersion"`
	GPUs         []HeartbeatGPU `json:"gpus"`
	// Workloads is the state of each workload the server assigned to the
	// node; absent from agents that run nothing (or predate it).
	Workloads []WorkloadReport `json:"workloads,omitempty"`
	// Sequence: as InventoryRequest's.
	Sequence int64 `json:"sequence,omitempty"`
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

// Workloads: the server tells the agent, in the answer to either report,
// which VMs and pods should be running on its node (Assignment), and the
// agent reports each one's state in its next heartbeat (WorkloadReport).
// Both lists are optional on the wire, so an older agent (which ignores
// the answer's list and sends none) and an older server (which sends none
// and ignores the report's) keep working.

// Assignment is one VM or pod the server has placed on the agent's node,
// in status deploying or running.
type Assignment struct {
	ID string `json:"id"`
	// Generation counts the row's runs: it grows each time the row enters
	// deploying. A report names the generation it is about, so a report
	// about an earlier run cannot move the current one.
	Generation int `json:"generation"`
	// GPUs are the UUIDs of the GPUs it holds on the node.
	GPUs []string `json:"gpus"`
}

// Workload states an agent reports.
const (
	StateStarting = "starting" // assigned, not running yet
	StateRunning  = "running"
	StateExited   = "exited" // it ended by itself
	StateFailed   = "failed" // it could not start, or its runtime lost it
)

// WorkloadStates are the states a WorkloadReport may carry.
var WorkloadStates = []string{StateStarting, StateRunning, StateExited, StateFailed}

// WorkloadReport is one assigned workload's state in a HeartbeatRequest.
type WorkloadReport struct {
	ID         string `json:"id"`
	Generation int    `json:"generation"`
	State      string `json:"state"`
	// Message is one sentence saying why, for exited and failed.
	Message string `json:"message,omitempty"`
}

// ReportResponse is the answer to either report: the node's id and status
// and what should run on it.
type ReportResponse struct {
	NodeID    string       `json:"nodeId"`
	Status    string       `json:"status"`
	Workloads []Assignment `json:"workloads"`
}

// Node identity. An operator enrolls a node and hands its agent a one-time
// bootstrap token; the agent POSTs to RegisterPath with it as the bearer
// token (no body) and gets a node credential, which it sends as the bearer
// token of every report from then on. A report made with a credential must
// name the credential's node and cluster, and carry a Sequence above the
// last one the server accepted for the node: the agent starts from the
// current time in Unix nanoseconds and adds one per report, so it grows
// across restarts without being stored.
const RegisterPath = "/v1/agent/register"

// RegisterResponse is the answer to the exchange: the node credential
// (shown once; the server keeps only its hash) and what it is bound to.
type RegisterResponse struct {
	NodeName   string `json:"nodeName"`
	ClusterID  string `json:"clusterId"`
	Credential string `json:"credential"`
}

// CodeNodeCredentialRequired is the error code of a report refused for
// being made with an API key where a node credential is required: by
// default for every node, and in legacy mode for a node that has one. The
// agent tells its operator how to get a credential when it sees it.
const CodeNodeCredentialRequired = "NODE_CREDENTIAL_REQUIRED"

// Prefixes of the two secrets, so a log, a secret scanner or the server
// tells them apart from API keys at a glance.
const (
	BootstrapTokenPrefix = "gpgboot_"
	CredentialPrefix     = "gpgnode_"
)
