package nodes

import (
	"context"
	"errors"
	"log/slog"

	"gpugraph/agentapi"
	"gpugraph/apierr"
	"gpugraph/models"
	"gpugraph/store"
)

// Report is the answer to either report.
type Report struct {
	NodeID string
	Status models.NodeStatus
	// Created is true when this inventory registered the node.
	Created bool
	// Workloads is what should run on the node now.
	Workloads []agentapi.Assignment
}

// Error codes of the agent API.
const (
	CodeNodeNotFound   = "NODE_NOT_FOUND"
	CodeGPUNotFound    = "GPU_NOT_FOUND"
	CodeGPUOnOtherNode = "GPU_ON_OTHER_NODE"
)

// ReportInventory registers or updates the reporting node, for a node
// credential of that node or (legacy mode) a key holding nodes.report.
func (s *Service) ReportInventory(ctx context.Context, who Reporter, in agentapi.InventoryRequest) (Report, error) {
	// The report is checked before the identity is looked up, so that
	// nothing the database would refuse (a NUL in a name) reaches it.
	if err := s.MayReport(who); err != nil {
		return Report{}, err
	}
	inv, err := inventoryToStore(in)
	if err != nil {
		return Report{}, err
	}
	cluster, err := s.admit(ctx, who, in.NodeName, in.ClusterID, in.Sequence)
	if err != nil {
		return Report{}, err
	}
	inv.ClusterID, inv.Sequence = cluster, in.Sequence
	rep, err := s.store.RegisterInventory(ctx, inv, store.Now())
	if err != nil {
		return Report{}, reportError(err)
	}
	who.noteLegacy(ctx, in.NodeName)
	return s.answer(ctx, Report{NodeID: rep.NodeID, Status: rep.Status, Created: rep.Created})
}

// ReportHeartbeat records the reporting node's heartbeat, for the same
// reporters as ReportInventory.
func (s *Service) ReportHeartbeat(ctx context.Context, who Reporter, in agentapi.HeartbeatRequest) (Report, error) {
	if err := s.MayReport(who); err != nil {
		return Report{}, err
	}
	hb, err := heartbeatToStore(in)
	if err != nil {
		return Report{}, err
	}
	if _, err := s.admit(ctx, who, in.NodeName, "", in.Sequence); err != nil {
		return Report{}, err
	}
	hb.Sequence = in.Sequence
	rep, err := s.store.RecordHeartbeat(ctx, hb, store.Now())
	if err != nil {
		return Report{}, reportError(err)
	}
	// The pods that lost their job are re-submitted before the answer is
	// read, so the agent learns their new generation in this answer.
	// Each is its own transaction; one that fails is logged and left
	// interrupted (its owner may restart it), and the report stands.
	for _, lost := range rep.JobLost {
		if _, err := s.compute.Resubmit(ctx, lost.OrganizationID, lost.ID); err != nil {
			slog.ErrorContext(ctx, "re-submitting a pod that lost its job", "pod", lost.ID, "err", err)
		}
	}
	who.noteLegacy(ctx, in.NodeName)
	return s.answer(ctx, Report{NodeID: rep.NodeID, Status: rep.Status})
}

// answer adds to rep what should run on its node.
func (s *Service) answer(ctx context.Context, rep Report) (Report, error) {
	as, err := s.store.Assignments(ctx, rep.NodeID)
	if err != nil {
		return Report{}, err
	}
	rep.Workloads = assignmentsOf(as)
	return rep, nil
}

// reportError turns the store's refusals into what the agent acts on: a
// 404 NODE_NOT_FOUND or GPU_NOT_FOUND makes it send its inventory again.
func reportError(err error) error {
	var unknownGPU *store.UnknownGPUError
	var elsewhere *store.GPUElsewhereError
	var stale *store.StaleReportError
	var shrink *store.InventoryShrinkError
	switch {
	case errors.As(err, &stale):
		return apierr.Conflict(CodeStaleReport, "report sequence %d is not greater than %d, the last this node's reports carried; a replayed or reordered report is refused",
			stale.Sequence, stale.Last)
	case errors.As(err, &shrink):
		return apierr.Conflict(CodeInventoryShrinksHeld, "%s; nothing of this inventory was applied: an operator must stop or move those workloads first",
			shrink.Error())
	case errors.Is(err, store.ErrUnknownNode):
		return apierr.NotFound(CodeNodeNotFound, "this node is not registered; send POST /v1/agent/inventory first")
	case errors.As(err, &unknownGPU):
		return apierr.NotFound(CodeGPUNotFound, "GPU %s is not in this node's inventory; send POST /v1/agent/inventory again", unknownGPU.UUID)
	case errors.As(err, &elsewhere):
		return apierr.Conflict(CodeGPUOnOtherNode,
			"GPU %s is registered on node %q; an operator must remove it there before this node can report it", elsewhere.UUID, elsewhere.NodeName)
	}
	return err
}
