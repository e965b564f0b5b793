// Package agentapi is the wire contract between the node agent and the
// server: the JSON bodies of POST /v1/agent/inventory and
// /v1/agent/heartbeat. Both sides import it, so they cannot drift apart,
// and the server does not link NVML to read them.
package agentapi

import (
	"net/url"
	"slices"
)

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

// ConsolePath is where the agent PUTs the tail of a VM's serial console
// (the raw bytes, application/octet-stream, at most ConsoleBytes: the
// server keeps the last ConsoleBytes of a longer body). It answers 204;
// 404 VM_NOT_ON_NODE for a VM that is not on the agent's node. Only a node
// credential pushes.
func ConsolePath(vmID string) string { return "/v1/agent/vms/" + url.PathEscape(vmID) + "/console" }

// ConsoleBytes is how much of a VM's serial console the server keeps and
// answers: the last 64 KiB.
const ConsoleBytes = 64 << 10

// Workloads: the server tells the agent, in the answer to either report,
// which VMs and pods should be running on its node (Assignment), and the
// agent reports each one's state in its next heartbeat (WorkloadReport).
// Both lists are optional on the wire, so an older agent (which ignores
// the answer's list and sends none) and an older server (which sends none
// and ignores the report's) keep working.

// Assignment is one VM or pod the server has placed on the agent's node:
// in status deploying or running (Action run, reboot or recreate), or
// stopped, terminated or interrupted while its teardown is not yet
// reported (Action stop). Every field after GPUs was added later and is
// optional to an agent: one that reads only ID, Generation and GPUs keeps
// working, and a server that sends only those is read as Action run.
type Assignment struct {
	ID string `json:"id"`
	// Generation counts the row's runs: it grows each time the row enters
	// deploying, and each time a running row is told to reboot or
	// recreate. A report names the generation it is about, so a report
	// about an earlier run cannot move the current one.
	Generation int `json:"generation"`
	// GPUs are the UUIDs of the GPUs it holds on the node, in index order.
	// A preempted workload's stop lists none: its GPUs already belong to
	// the preemptor, whose run on them comes in the same list.
	GPUs []string `json:"gpus"`

	// Kind is KindVM or KindPod.
	Kind string `json:"kind,omitempty"`
	// Image is what to run: a pod's container image reference, a VM's
	// boot image URL.
	Image string `json:"image,omitempty"`
	// GPUIndexes are the node-local indexes of GPUs, in the same order
	// (NVML's index, what nvidia-smi shows), for runtimes that expose
	// devices by index.
	GPUIndexes []int `json:"gpuIndexes,omitempty"`
	// CPUCores, RAMGb and DiskSizeGb are its share of the host: the
	// runtime's CPU and memory limits, and a VM's root disk (a pod's
	// container filesystem) size.
	CPUCores   int `json:"cpuCores,omitempty"`
	RAMGb      int `json:"ramGb,omitempty"`
	DiskSizeGb int `json:"diskSizeGb,omitempty"`
	// Volume is the persistent storage bound to the workload on this
	// node: a pod's /workspace, a VM's disk. Absent when it has none.
	Volume *Volume `json:"volume,omitempty"`
	// Public tells whether EndpointURL is reachable from the internet;
	// EndpointURL is the address the platform routes to it ("" when none).
	Public      bool   `json:"public,omitempty"`
	EndpointURL string `json:"endpointUrl,omitempty"`
	// Action is what the agent is to do with this generation: one of
	// Actions; "" (an older server) is ActionRun.
	Action string `json:"action,omitempty"`
	// SSHPublicKeys are the OpenSSH public keys (authorized_keys lines,
	// checked by the server) a VM's guest authorizes: the runtime hands
	// them to cloud-init (a NoCloud seed) on every run. Only for KindVM,
	// never with ActionStop; absent when the create carried none.
	SSHPublicKeys []string `json:"sshPublicKeys,omitempty"`
}

// Kinds of workload.
const (
	KindVM  = "vm"
	KindPod = "pod"
)

// Actions the server tells an agent, per generation.
const (
	// ActionRun: make this generation run (start it; keep it running).
	ActionRun = "run"
	// ActionReboot: a VM rebooted in place — same disk, same GPUs; the
	// agent reboots it and reports the new generation running.
	ActionReboot = "reboot"
	// ActionRecreate: a pod's container replaced by a new one from the
	// image (its filesystem reset), the same Volume mounted at
	// MountPath; the agent reports the new generation running.
	ActionRecreate = "recreate"
	// ActionStop: tear the workload down (stop it, release its GPUs) and
	// report it StateGone. The volume is kept unless the row is deleted
	// (Volume.Delete). Ordering: the agent starts no run on a GPU that a
	// workload it still tears down (told stop, or no longer listed) may
	// use, going by the GPUs it started that workload with; the run stays
	// StateStarting with no stage until that one is gone. The server hands
	// a preempted workload's GPUs over at once and relies on this.
	ActionStop = "stop"
)

// Actions is the closed list of Assignment.Action values.
var Actions = []string{ActionRun, ActionReboot, ActionRecreate, ActionStop}

// WorkspaceMount is where a pod's volume is mounted.
const WorkspaceMount = "/workspace"

// Volume is a workload's persistent storage on the node.
type Volume struct {
	// ID names the volume on the node; it stays the same across reboot,
	// recreate and stop/start on this node, and is new after a move.
	ID     string `json:"id"`
	SizeGb int    `json:"sizeGb"`
	// MountPath is where it is mounted in the workload (WorkspaceMount
	// for a pod; "" for a VM, whose disk it is).
	MountPath string `json:"mountPath,omitempty"`
	// Fresh: the volume has never held data; the agent creates it empty.
	// A volume the agent already holds under ID is never emptied because
	// of this flag — a move gives a new ID.
	Fresh bool `json:"fresh,omitempty"`
	// Delete: with ActionStop, the row is gone for good (terminated), so
	// the agent deletes the volume once the workload is torn down.
	Delete bool `json:"delete,omitempty"`
}

// Workload states an agent reports.
const (
	StateStarting = "starting" // assigned, not running yet
	StateRunning  = "running"
	StateExited   = "exited" // it ended by itself
	StateFailed   = "failed" // it could not start, or its runtime lost it
	// StateGone: a workload told ActionStop is torn down; its GPUs and
	// host share are free on the node. The server releases them then. A
	// heartbeat that does not list a workload being torn down at all
	// counts as gone too (the agent runs nothing of it): that is how an
	// agent that predates ActionStop, and is never sent one, releases.
	StateGone = "gone"
)

// WorkloadStates are the states a WorkloadReport may carry.
var WorkloadStates = []string{StateStarting, StateRunning, StateExited, StateFailed, StateGone}

// Provisioning stages, in order: where a workload is on its way to
// running. The server sets queued (pending, no node) and scheduled
// (placed, the agent has not said more); the agent reports the rest.
const (
	StageQueued         = "queued"
	StageScheduled      = "scheduled"
	StagePullingImage   = "pulling_image"
	StageCreatingVolume = "creating_volume"
	StageBooting        = "booting"
	StageReady          = "ready"
)

// ProvisioningStages is the closed list, in order.
var ProvisioningStages = []string{StageQueued, StageScheduled, StagePullingImage, StageCreatingVolume, StageBooting, StageReady}

// WorkloadReport is one assigned workload's state in a HeartbeatRequest.
type WorkloadReport struct {
	ID         string `json:"id"`
	Generation int    `json:"generation"`
	State      string `json:"state"`
	// Message is one sentence saying why, for exited and failed.
	Message string `json:"message,omitempty"`
	// ProvisioningStage is where a starting workload is (one of
	// ProvisioningStages after scheduled; ready once running); optional.
	ProvisioningStage string `json:"provisioningStage,omitempty"`
	// Endpoint is where the workload answers, as its runtime knows it
	// (a VM's forwarded SSH port: ssh://HOST:PORT); optional. The server
	// records a VM's as its endpointUrl.
	Endpoint string `json:"endpoint,omitempty"`
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

// SharesGPU reports whether the GPU UUID lists a and b name one GPU in
// common: a run waits while a workload being torn down may use one of its
// GPUs (the ordering rule, docs/contract.md#agent), in either runtime.
func SharesGPU(a, b []string) bool {
	return slices.ContainsFunc(a, func(u string) bool { return slices.Contains(b, u) })
}
