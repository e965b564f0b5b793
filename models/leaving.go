package models

import "time"

// LeavingDetail is the detail models.NodeLeaving writes after its prefix:
// the instant the node leaves, RFC 3339 in UTC to the second
// ("node leaving at 2026-12-03T00:00:00Z").
func LeavingDetail(at time.Time) string { return at.UTC().Format(time.RFC3339) }

// LeavingReason is the whole statusReason of a running workload on a node
// leaving at at.
func LeavingReason(at time.Time) string { return ReasonNodeLeavingPrefix + LeavingDetail(at) }

// ComputeClass values the lifecycle reads: a reserved workload's restart
// may preempt interruptible ones of other organizations (placement's
// preemption), and an operator may reclaim a node's interruptible ones.
// A created VM or pod is on_demand.
const (
	ComputeClassReserved      = "reserved"
	ComputeClassInterruptible = "interruptible"
	ComputeClassOnDemand      = "on_demand"
)
