package fleet

import (
	"context"
	"time"

	"gpugraph/internal/auth"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/store"
	"gpugraph/models"
)

// NodeChange is a node after an operator's change, and how many of its
// workloads the change moved.
type NodeChange struct {
	Node      *models.Node
	Workloads int64
}

// SetLeavingAt decommissions node id at at (truncated to the second): its
// running workloads carry "node leaving at <at>" from now on, and at that
// instant the sweep removes the node and ends them with node_removed. A nil
// at clears a leavingAt that has not passed, and the running workloads'
// leaving reason with it. at must be in the future.
func (s *Service) SetLeavingAt(ctx context.Context, caller *auth.Caller, id string, at *time.Time) (*NodeChange, error) {
	actor, err := s.operator(caller)
	if err != nil {
		return nil, err
	}
	now := store.Now()
	if at != nil {
		t := at.UTC().Truncate(time.Second)
		if !t.After(now) {
			return nil, apierr.BadRequest("leavingAt %s is not in the future; a node leaves at a time still to come",
				models.LeavingDetail(t))
		}
		at = &t
	}
	var out *NodeChange
	err = s.store.InTx(ctx, func(tx *store.Txn) error {
		// The node is read, its workloads locked and changed, and only then
		// the node locked and checked again: VM rows before node rows.
		node, err := s.store.Node(tx, id)
		if err != nil {
			return err
		}
		if err := canSetLeavingAt(node, id, now); err != nil {
			return err
		}
		ch := store.Change{Transition: models.NodeStaying, Actor: actor}
		scope := store.Workloads{NodeIDs: []string{id}, ReasonPrefix: models.ReasonNodeLeavingPrefix}
		if at != nil {
			ch = store.Change{Transition: models.NodeLeaving, Actor: actor, Detail: models.LeavingDetail(*at)}
			scope = store.Workloads{NodeIDs: []string{id}, ReasonNot: models.LeavingReason(*at)}
		}
		n, err := s.store.ApplyToWorkloads(tx, scope, ch, now)
		if err != nil {
			return err
		}
		if node, err = s.store.LockNodeByID(tx, id); err != nil {
			return err
		}
		if err := canSetLeavingAt(node, id, now); err != nil {
			return err
		}
		if err := s.store.SetNodeLeavingAt(tx, node, at, actor, now); err != nil {
			return err
		}
		node.LeavingAt = at
		out = &NodeChange{Node: node, Workloads: n}
		return nil
	})
	return out, err
}

func canSetLeavingAt(node *models.Node, id string, now time.Time) error {
	switch {
	case node == nil:
		return apierr.NotFound(CodeNodeNotFound, "there is no node %q", id)
	case node.Status == models.NodeRemoved:
		return apierr.Conflict(CodeNodeRemoved, "node %s is already removed from the fleet", node.Name)
	case node.LeavingAt != nil && !node.LeavingAt.After(now):
		return apierr.Conflict(CodeNodeLeft, "node %s left at %s and is being removed; its leavingAt can no longer change",
			node.Name, models.LeavingDetail(*node.LeavingAt))
	}
	return nil
}

// Reclaim takes node id's interruptible capacity back for its owner: its
// interruptible workloads (computeClass) stop with
// spot_reclaimed_by_capacity_owner and release their GPUs; disks stay.
func (s *Service) Reclaim(ctx context.Context, caller *auth.Caller, id string) (*NodeChange, error) {
	actor, err := s.operator(caller)
	if err != nil {
		return nil, err
	}
	now := store.Now()
	var out *NodeChange
	err = s.store.InTx(ctx, func(tx *store.Txn) error {
		node, err := s.store.Node(tx, id)
		if err != nil {
			return err
		}
		if node == nil {
			return apierr.NotFound(CodeNodeNotFound, "there is no node %q", id)
		}
		n, err := s.store.ApplyToWorkloads(tx,
			store.Workloads{NodeIDs: []string{id}, ComputeClass: models.ComputeClassInterruptible},
			store.Change{Transition: models.SpotReclaimed, Actor: actor}, now)
		out = &NodeChange{Node: node, Workloads: n}
		return err
	})
	return out, err
}
