package compute

import (
	"net/http"

	"gpugraph/internal/lib/apierr"
	"gpugraph/placement"
)

// The codes restartVm answers besides placement's.
const (
	CodeVMNotFound   = "VM_NOT_FOUND"
	CodeVMReadOnly   = "VM_READ_ONLY"
	CodeVMTerminated = "VM_TERMINATED"
	CodeVMNotReady   = "VM_NOT_READY"
	CodePodStopping  = "POD_STOPPING"
	// The codes of createVm besides placement's: no node could ever hold
	// the request; its GPU model, cluster or node pool is unknown.
	CodeUnschedulable    = "UNSCHEDULABLE"
	CodeGPUModelNotFound = "GPU_MODEL_NOT_FOUND"
	CodeClusterNotFound  = "CLUSTER_NOT_FOUND"
	CodeNodePoolNotFound = "NODE_POOL_NOT_FOUND"
	// An unknown instance type: the code the instance types service
	// answers for one.
	CodeInstanceTypeNotFound = "INSTANCE_TYPE_NOT_FOUND"
	// A create that would queue past its organization's bound on pending
	// VMs and pods (Service.MaxPending).
	CodePendingLimitExceeded = "PENDING_LIMIT_EXCEEDED"
)

// Answer is how restartVm answers one placement Code: the API code for a
// VM and for a pod, the HTTP status and, for a 503, the Retry-After in
// seconds. A node that is busy frees up when another workload stops; a
// fabric or a cluster without room takes longer.
type Answer struct {
	VMCode, PodCode string
	HTTPStatus      int
	RetryAfter      int
}

// Answers maps every placement Code to its answer; the test checks that
// none is missing.
var Answers = map[placement.Code]Answer{
	placement.NodeOffline:  {"VM_NODE_OFFLINE", "POD_NODE_OFFLINE", http.StatusConflict, 0},
	placement.NoInfiniBand: {"POD_NODE_NO_INFINIBAND", "POD_NODE_NO_INFINIBAND", http.StatusConflict, 0},
	placement.NoAMDGrant:   {"POD_NODE_NO_AMD_GRANT", "POD_NODE_NO_AMD_GRANT", http.StatusConflict, 0},
	placement.NodeBusy:     {"VM_NODE_BUSY", "POD_NODE_BUSY", http.StatusServiceUnavailable, 30},
	placement.NoIPCapacity: {"INSUFFICIENT_IP_CAPACITY", "INSUFFICIENT_IP_CAPACITY", http.StatusServiceUnavailable, 60},
	// Answered for pods too: no node has room, whatever is asking.
	placement.NoCapacity: {"VM_NO_CAPACITY", "VM_NO_CAPACITY", http.StatusServiceUnavailable, 60},
	// A create no node could ever hold: refused at once, never queued.
	placement.Unschedulable: {CodeUnschedulable, CodeUnschedulable, http.StatusConflict, 0},
}

// APICode is the code of the answer to c, for a pod or a VM.
func (a Answer) APICode(pod bool) string {
	if pod {
		return a.PodCode
	}
	return a.VMCode
}

// Refusal turns placement's answer for a VM (pod true: a pod) into the
// API's, with its HTTP status and Retry-After.
func Refusal(st *placement.Status, pod bool) *apierr.Error {
	a := Answers[st.Code]
	e := apierr.New(a.HTTPStatus, a.APICode(pod), "%s", st.Message)
	if a.RetryAfter > 0 {
		e.RetryAfter = a.RetryAfter
	}
	return e
}
