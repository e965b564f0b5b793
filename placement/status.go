package placement

import "net/http"

// Error codes, as restartVm answers them.
const (
	CodeVMNodeOffline          = "VM_NODE_OFFLINE"
	CodePodNodeOffline         = "POD_NODE_OFFLINE"
	CodePodNodeNoInfiniBand    = "POD_NODE_NO_INFINIBAND"
	CodePodNodeNoAMDGrant      = "POD_NODE_NO_AMD_GRANT"
	CodeVMNodeBusy             = "VM_NODE_BUSY"
	CodePodNodeBusy            = "POD_NODE_BUSY"
	CodeInsufficientIPCapacity = "INSUFFICIENT_IP_CAPACITY"
	CodeVMNoCapacity           = "VM_NO_CAPACITY"
)

// Status is why a node cannot take a request. A nil *Status means it can.
type Status struct {
	Filter     string // name of the filter that rejected the node
	Code       string // error code of the API answer
	HTTPStatus int
	// Reason is short and node-independent ("offline", "too little RAM") so
	// that equal reasons of many nodes add up in Place's summary.
	Reason string
	// Message is the detailed sentence a user reads when this node alone
	// answers (the restart of a VM on its own node).
	Message string
}

// Error returns the detailed message, so that a Status can travel as an error.
func (s *Status) Error() string { return s.Message }

func busyCode(req *Request) string {
	if req.Pod {
		return CodePodNodeBusy
	}
	return CodeVMNodeBusy
}

func offlineCode(req *Request) string {
	if req.Pod {
		return CodePodNodeOffline
	}
	return CodeVMNodeOffline
}

func conflict(code, reason, msg string) *Status {
	return &Status{Code: code, HTTPStatus: http.StatusConflict, Reason: reason, Message: msg}
}

func unavailable(code, reason, msg string) *Status {
	return &Status{Code: code, HTTPStatus: http.StatusServiceUnavailable, Reason: reason, Message: msg}
}
