package nodes

import (
	"context"
	"errors"
	"log/slog"

	"gpugraph/agentapi"
	"gpugraph/apierr"
	"gpugraph/auth"
	"gpugraph/compute"
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

// ReportInventory registers or updates the reporting node, for a caller
// holding nodes.report.
func ReportInventory(ctx context.Context, st *store.Store, c *auth.Caller, in agentapi.InventoryRequest) (Report, error) {
	if !c.Can(auth.NodesReport) {
		return Report{}, apierr.MissingPermission(auth.NodesReport)
	}
	inv, err := inventoryToStore(in)
	if err != nil {
		return Report{}, err
	}
	rep, err := st.RegisterInventory(ctx, inv, store.Now())
	if err != nil {
		return Report{}, reportError(err)
	}
	return answer(ctx, st, Report{NodeID: rep.NodeID, Status: rep.Status, Created: rep.Created})
}

// ReportHeartbeat records the reporting node's heartbeat, for a caller
// holding nodes.report.
func ReportHeartbeat(ctx context.Context, st *store.Store, c *auth.Caller, in agentapi.HeartbeatRequest) (Report, error) {
	if !c.Can(auth.NodesReport) {
		return Report{}, apierr.MissingPermission(auth.NodesReport)
	}
	hb, err := heartbeatToStore(in)
	if err != nil {
		return Report{}, err
	}
	rep, err := st.RecordHeartbeat(ctx, hb, store.Now())
	if err != nil {
		return Report{}, reportError(err)
	}
	// The pods that lost their job are re-submitted before the answer is
	// read, so the agent learns their new generation in this answer.
	// Each is its own transaction; one that fails is logged and left
	// interrupted (its owner may restart it), and the report stands.
	compute := compute.New(st)
	for _, lost := range rep.JobLost {
		if _, err := compute.Resubmit(ctx, lost.OrganizationID, lost.ID); err != nil {
			slog.ErrorContext(ctx, "re-submitting a pod that lost its job", "pod", lost.ID, "err", err)
		}
	}
	return answer(ctx, st, Report{NodeID: rep.NodeID, Status: rep.Status})
}

// answer adds to rep what should run on its node.
func answer(ctx context.Context, st *store.Store, rep Report) (Report, error) {
	as, err := st.Assignments(ctx, rep.NodeID)
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
	switch {
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
