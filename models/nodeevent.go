package models

import (
	"io"
	"time"
)

// NodeEventKind says what a node event changed.
type NodeEventKind string

const (
	// NodeEventStatus: the node's status (online, offline, removed).
	NodeEventStatus NodeEventKind = "status"
	// NodeEventLeavingAt: the operator set or cleared the node's leavingAt.
	NodeEventLeavingAt NodeEventKind = "leaving_at"
	// NodeEventGPUHealth: one of the node's GPUs changed health.
	NodeEventGPUHealth NodeEventKind = "gpu_health"
)

// NodeEvent is one change of a node's shared state, as the node event log
// keeps it: nothing in it says who runs what on the node, so every caller
// who may read the node may read its events. Only the fields of its kind
// are set.
type NodeEvent struct {
	ID         int64         `gorm:"primaryKey;autoIncrement" json:"id"`
	NodeID     string        `json:"nodeId"`
	Kind       NodeEventKind `json:"kind"`
	FromStatus *NodeStatus   `json:"fromStatus"`
	ToStatus   *NodeStatus   `json:"toStatus"`
	// FromLeavingAt and ToLeavingAt: nil is "not leaving".
	FromLeavingAt *time.Time `json:"fromLeavingAt"`
	ToLeavingAt   *time.Time `json:"toLeavingAt"`
	GPUID         *string    `gorm:"column:gpu_id" json:"gpuId"`
	FromHealth    *GPUHealth `json:"fromHealth"`
	ToHealth      *GPUHealth `json:"toHealth"`
	// FailedReason is the GPU's failedReason after the change ("XID 79").
	FailedReason *string   `json:"failedReason"`
	ActorKind    ActorKind `json:"actorKind"`
	ActorID      string    `json:"actorId"`
	At           time.Time `json:"at"`
}

// TableName is the node event log's table.
func (NodeEvent) TableName() string { return "node_events" }

// Actor is who made the event's change.
func (e *NodeEvent) Actor() Actor { return Actor{Kind: e.ActorKind, ID: e.ActorID} }

// NodeStatusEvent is the event of node nodeID going from one status to another.
func NodeStatusEvent(nodeID string, from, to NodeStatus, by Actor, at time.Time) *NodeEvent {
	return &NodeEvent{NodeID: nodeID, Kind: NodeEventStatus, FromStatus: &from, ToStatus: &to,
		ActorKind: by.Kind, ActorID: by.ID, At: at}
}

// GPUFailedEvent is the event of a healthy GPU failing with reason.
func GPUFailedEvent(nodeID, gpuID, reason string, by Actor, at time.Time) *NodeEvent {
	from, to := GPUHealthy, GPUFailed
	return &NodeEvent{NodeID: nodeID, Kind: NodeEventGPUHealth, GPUID: &gpuID, FromHealth: &from, ToHealth: &to,
		FailedReason: &reason, ActorKind: by.Kind, ActorID: by.ID, At: at}
}

// NodeEventKinds lists every kind a node event may have.
var NodeEventKinds = []NodeEventKind{NodeEventStatus, NodeEventLeavingAt, NodeEventGPUHealth}

func (k NodeEventKind) MarshalGQL(w io.Writer)    { marshalEnum(w, string(k)) }
func (k *NodeEventKind) UnmarshalGQL(v any) error { return unmarshalEnum(v, k, NodeEventKinds) }
