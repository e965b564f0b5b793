package models

import (
	"gpugraph/internal/lib/apierr"

	"io"
	"strconv"
	"strings"
)

// The statuses are stored and sent over REST in lower case, as the seeds
// write them; GraphQL enum values are the same words in upper case.

// VMStatus is the status of a VM or pod.
type VMStatus string

const (
	VMPending     VMStatus = "pending"
	VMDeploying   VMStatus = "deploying"
	VMRunning     VMStatus = "running"
	VMStopped     VMStatus = "stopped"
	VMFailed      VMStatus = "failed"
	VMTerminated  VMStatus = "terminated"
	VMInterrupted VMStatus = "interrupted"
)

// VMStatuses lists every status a VM row may carry.
var VMStatuses = []VMStatus{VMPending, VMDeploying, VMRunning, VMStopped, VMFailed, VMTerminated, VMInterrupted}

// NodeStatus is the status of a node.
type NodeStatus string

const (
	NodeOnline  NodeStatus = "online"
	NodeOffline NodeStatus = "offline"
	NodeRemoved NodeStatus = "removed"
)

// NodeStatuses lists every status a node row may carry.
var NodeStatuses = []NodeStatus{NodeOnline, NodeOffline, NodeRemoved}

// GPUHealth is a GPU's health as the node agent judges it.
type GPUHealth string

const (
	GPUHealthy GPUHealth = "healthy"
	GPUFailed  GPUHealth = "failed"
)

// GPUHealths lists every health value.
var GPUHealths = []GPUHealth{GPUHealthy, GPUFailed}

// Manufacturer is a GPU vendor of the catalog.
type Manufacturer string

const (
	NVIDIA Manufacturer = "NVIDIA"
	AMD    Manufacturer = "AMD"
)

// Manufacturers lists the vendors the catalog knows.
var Manufacturers = []Manufacturer{NVIDIA, AMD}

func (s VMStatus) Valid() bool                { return oneOf(s, VMStatuses) }
func (s NodeStatus) Valid() bool              { return oneOf(s, NodeStatuses) }
func (h GPUHealth) Valid() bool               { return oneOf(h, GPUHealths) }
func (m Manufacturer) Valid() bool            { return oneOf(m, Manufacturers) }
func (s VMStatus) MarshalGQL(w io.Writer)     { marshalEnum(w, string(s)) }
func (s NodeStatus) MarshalGQL(w io.Writer)   { marshalEnum(w, string(s)) }
func (h GPUHealth) MarshalGQL(w io.Writer)    { marshalEnum(w, string(h)) }
func (m Manufacturer) MarshalGQL(w io.Writer) { marshalEnum(w, string(m)) }

func (s *VMStatus) UnmarshalGQL(v any) error     { return unmarshalEnum(v, s, VMStatuses) }
func (s *NodeStatus) UnmarshalGQL(v any) error   { return unmarshalEnum(v, s, NodeStatuses) }
func (h *GPUHealth) UnmarshalGQL(v any) error    { return unmarshalEnum(v, h, GPUHealths) }
func (m *Manufacturer) UnmarshalGQL(v any) error { return unmarshalEnum(v, m, Manufacturers) }

func oneOf[T comparable](v T, all []T) bool {
	for _, a := range all {
		if v == a {
			return true
		}
	}
	return false
}

func marshalEnum(w io.Writer, s string) {
	_, _ = io.WriteString(w, strconv.Quote(strings.ToUpper(s)))
}

func unmarshalEnum[T ~string](v any, dst *T, all []T) error {
	s, ok := v.(string)
	if !ok {
		return apierr.BadRequest("enum value must be a string, got %T", v)
	}
	for _, a := range all {
		if strings.EqualFold(string(a), s) {
			*dst = a
			return nil
		}
	}
	return apierr.BadRequest("%q is not a valid value", s)
}
