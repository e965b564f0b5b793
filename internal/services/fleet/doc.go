// Package fleet is the fleet operator's service: decommissioning a node
// (its leavingAt), reclaiming a node's interruptible capacity for its
// owner, and an organization's state (suspended, balance exhausted,
// deleted, active again). Every path needs auth.NodesAdmin, held by the
// platform operator's keys; each change and the transitions it causes are
// written in one transaction, through the lifecycle table.
package fleet
