package nodes

import (
	"context"
	"log/slog"
	"strings"

	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/store"
	"gpugraph/models"
	"gpugraph/placement"
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
	inv, err := checkInventory(in)
	if err != nil {
		return Report{}, err
	}
	cluster, err := s.admit(ctx, who, in.NodeName, in.ClusterID, in.Sequence)
	if err != nil {
		return Report{}, err
	}
	inv.ClusterID, inv.Sequence = cluster, in.Sequence
	rep, err := s.register(ctx, inv, store.Now())
	if err != nil {
		return Report{}, err
	}
	who.noteLegacy(ctx, in.NodeName)
	return s.answer(ctx, Report{NodeID: rep.NodeID, Status: rep.Status, Created: rep.Created}, rep.AgentVersion)
}

// ReportHeartbeat records the reporting node's heartbeat, for the same
// reporters as ReportInventory.
func (s *Service) ReportHeartbeat(ctx context.Context, who Reporter, in agentapi.HeartbeatRequest) (Report, error) {
	if err := s.MayReport(who); err != nil {
		return Report{}, err
	}
	hb, err := checkHeartbeat(in)
	if err != nil {
		return Report{}, err
	}
	if _, err := s.admit(ctx, who, in.NodeName, "", in.Sequence); err != nil {
		return Report{}, err
	}
	hb.Sequence = in.Sequence
	now := store.Now()
	quiet, ok, err := s.quietHeartbeat(ctx, hb, now)
	if err != nil {
		return Report{}, err
	}
	if ok {
		who.noteLegacy(ctx, in.NodeName)
		return quiet, nil
	}
	rep, err := s.recordHeartbeat(ctx, hb, now)
	if err != nil {
		return Report{}, err
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
	return s.answer(ctx, Report{NodeID: rep.NodeID, Status: rep.Status}, rep.AgentVersion)
}

// MinAgentTeardown is the first agent version that performs an
// assignment's action (docs/contract.md#agent). An older agent reads every
// assignment as "run", so it is never sent a teardown: the row is left out
// of its answers, the agent drops what is no longer listed, and its next
// heartbeat, which no longer lists it, counts as the row gone.
const MinAgentTeardown = "2.7.0"

// answer adds to rep what should run on its node, for an agent of version
// agentVersion.
func (s *Service) answer(ctx context.Context, rep Report, agentVersion string) (Report, error) {
	teardowns := placement.AgentAtLeast(agentVersion, MinAgentTeardown)
	as, err := s.store.Assignments(ctx, rep.NodeID, assignedStatuses, teardowns)
	if err != nil {
		return Report{}, err
	}
	rep.Workloads = assignmentsOf(as)
	return rep, nil
}

// The refusals of a report, which the agent acts on: a 404
// NODE_NOT_FOUND or GPU_NOT_FOUND makes it send its inventory again.

func nodeNotFound() error {
	return apierr.NotFound(CodeNodeNotFound, "this node is not registered; send POST /v1/agent/inventory first")
}

func gpuNotFound(uuid string) error {
	return apierr.NotFound(CodeGPUNotFound, "GPU %s is not in this node's inventory; send POST /v1/agent/inventory again", uuid)
}

func gpuOnOtherNode(uuid, nodeName string) error {
	return apierr.Conflict(CodeGPUOnOtherNode,
		"GPU %s is registered on node %q; an operator must remove it there before this node can report it", uuid, nodeName)
}

// staleReport refuses a report whose sequence is not above the last one
// the node's reports carried: a replay, or a report overtaken.
func staleReport(seq, last int64) error {
	return apierr.Conflict(CodeStaleReport, "report sequence %d is not greater than %d, the last this node's reports carried; a replayed or reordered report is refused",
		seq, last)
}

// shrinksHeld refuses an inventory that would take from the node what its
// workloads hold; problems names each.
func shrinksHeld(nodeName string, problems []string) error {
	return apierr.Conflict(CodeInventoryShrinksHeld, "%s; nothing of this inventory was applied: an operator must stop or move those workloads first",
		"the inventory of node "+nodeName+" would take what its workloads hold: "+strings.Join(problems, "; "))
}
