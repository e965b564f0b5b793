package nodes

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"gpugraph/internal/store"
	"gpugraph/models"
)

// What an inventory does (docs/contract.md#agent): it registers its node
// when the name is new, else updates it, reconciles its GPUs by UUID
// (gpus.go), brings it online (a removed node stays removed) and resumes
// what the sweep interrupted (models.NodeBack). It is decided here and
// written through the store's primitives in one transaction, which locks
// the node's row first (internal/store/locks.go's lock order).

// inventory is a node's full report, sent when its agent starts, checked
// (checkInventory).
type inventory struct {
	NodeName     string
	ClusterID    string // "" leaves a known node's cluster as it is
	AgentVersion string
	// Host figures; zero leaves a known node's figure as it is (the agent
	// could not read it).
	CPUCores, RAMGb, DiskGb int
	GPUs                    []inventoryGPU
	// Sequence must be above the node's last report's (advanceSequence);
	// 0 is a report without one.
	Sequence int64
}

// inventoryGPU is one GPU of an inventory.
type inventoryGPU struct {
	Index        int
	UUID         string
	Address      string // "" when NVML could not read it
	Name         string // NVML product name; "" when NVML could not read it
	MemoryBytes  uint64
	Health       models.GPUHealth
	FailedReason string
}

// outcome is what a report did.
type outcome struct {
	NodeID  string
	Status  models.NodeStatus
	Created bool  // this report registered the node
	Resumed int64 // VMs and pods resumed from node_lost
	// JobLost are the pods this heartbeat's workload reports interrupted
	// (models.PodJobLost), for the platform to re-submit.
	JobLost []lostJob
	// AgentVersion is the reporting agent's, which says whether it is told
	// to tear workloads down (MinAgentTeardown).
	AgentVersion string
}

// agentActor is who a node's reports are by.
func agentActor(nodeName string) models.Actor {
	return models.Actor{Kind: models.ActorAgent, ID: nodeName}
}

// register files inv as of now.
func (s *Service) register(ctx context.Context, inv inventory, now time.Time) (outcome, error) {
	var out outcome
	var err error
	// Two replicas registering one new node at once: the loser's insert
	// hits the unique name (or model id) and, replayed, finds the winner's row.
	for attempt := 0; attempt < 3; attempt++ {
		err = s.store.InTx(ctx, func(tx *store.Txn) error {
			var e error
			out, e = s.registerIn(tx, inv, now)
			return e
		})
		if !store.IsUniqueViolation(err) {
			break
		}
	}
	return out, err
}

func (s *Service) registerIn(tx *store.Txn, inv inventory, now time.Time) (outcome, error) {
	node, err := s.store.LockNodeByName(tx, inv.NodeName)
	if err != nil {
		return outcome{}, err
	}
	out := outcome{}
	by := agentActor(inv.NodeName)
	var evs []*models.NodeEvent
	if node == nil {
		if node, err = s.createNode(tx, inv, now); err != nil {
			return outcome{}, err
		}
		out.Created = true
		// A node's first status has no "from".
		online := models.NodeOnline
		evs = append(evs, &models.NodeEvent{NodeID: node.ID, Kind: models.NodeEventStatus, ToStatus: &online,
			ActorKind: by.Kind, ActorID: by.ID, At: now})
		if err := s.advanceSequence(tx, node.ID, inv.Sequence); err != nil {
			return outcome{}, err
		}
	} else {
		if err := s.advanceSequence(tx, node.ID, inv.Sequence); err != nil {
			return outcome{}, err
		}
		if err := s.checkShrink(tx, node, inv); err != nil {
			return outcome{}, err
		}
		u := store.NodeUpdate{LastHeartbeatAt: now, AgentVersion: inv.AgentVersion, ClusterID: inv.ClusterID,
			CPUCores: known(inv.CPUCores), RAMGb: known(inv.RAMGb), DiskGb: known(inv.DiskGb)}
		if ev := comeOnline(node, &u, by, now); ev != nil {
			evs = append(evs, ev)
		}
		if err := s.store.UpdateNode(tx, node.ID, u); err != nil {
			return outcome{}, err
		}
	}
	out.NodeID, out.Status, out.AgentVersion = node.ID, node.Status, inv.AgentVersion
	if node.Status == models.NodeOnline {
		if out.Resumed, err = s.resume(tx, node, now); err != nil {
			return outcome{}, err
		}
	}
	failed, err := s.reconcileGPUs(tx, node.ID, inv.GPUs, by, now)
	if err != nil {
		return outcome{}, err
	}
	return out, s.store.AppendNodeEvents(tx, append(evs, failed...))
}

// known is a reported host figure, or 0 (the stored one stays) when the
// agent could not read it.
func known(v int) int { return max(v, 0) }

// comeOnline brings a reporting node online in u and node, unless it is
// removed (a removed node stays removed, whatever its agent says), and
// answers the status event of a node that was not online.
func comeOnline(node *models.Node, u *store.NodeUpdate, by models.Actor, now time.Time) *models.NodeEvent {
	if node.Status == models.NodeRemoved {
		return nil
	}
	var ev *models.NodeEvent
	if node.Status != models.NodeOnline {
		ev = models.NodeStatusEvent(node.ID, node.Status, models.NodeOnline, by, now)
	}
	u.Status, node.Status = models.NodeOnline, models.NodeOnline
	return ev
}

// resume applies models.NodeBack to the node's VMs and pods: what the
// sweep interrupted resumes.
func (s *Service) resume(tx *store.Txn, node *models.Node, now time.Time) (int64, error) {
	back := models.Step(models.NodeBack)
	return s.store.ApplyToWorkloads(tx, store.Workloads{NodeIDs: []string{node.ID}, Reason: back.FromReason},
		store.Change{Transition: back.Name, Actor: agentActor(node.Name)}, now)
}

// createNode registers a node under its name as id, or the name and a
// random suffix when another node already has that id.
func (s *Service) createNode(tx *store.Txn, inv inventory, now time.Time) (*models.Node, error) {
	id := inv.NodeName
	taken, err := s.store.NodeIDTaken(tx, id)
	if err != nil {
		return nil, err
	}
	if taken {
		id += "-" + randomHex(3)
	}
	n := &models.Node{
		ID:              id,
		Name:            inv.NodeName,
		ClusterID:       inv.ClusterID,
		NodePool:        "default",
		Status:          models.NodeOnline,
		AgentVersion:    inv.AgentVersion,
		CPUCores:        inv.CPUCores,
		RAMGb:           inv.RAMGb,
		DiskGb:          inv.DiskGb,
		LastHeartbeatAt: &now,
		AgentReportedAt: &now,
	}
	return n, s.store.CreateNode(tx, n)
}

// advanceSequence records seq as the node's last report sequence, or
// refuses the report when it is not above the last. Zero is a report
// without a sequence (an agent that predates it, on a legacy key): not
// checked.
func (s *Service) advanceSequence(tx *store.Txn, nodeID string, seq int64) error {
	if seq == 0 {
		return nil
	}
	advanced, last, err := s.store.AdvanceReportSequence(tx, nodeID, seq)
	if err != nil || advanced {
		return err
	}
	return staleReport(seq, last)
}

// checkShrink refuses an inventory of a known node that would move it to
// another cluster while workloads hold it, put its CPU, RAM or disk below
// what its VMs hold, or leave out a GPU a workload holds. Refused whole:
// nothing of it is written, the node keeps its last accepted inventory,
// and an operator drains the node (stop, reclaim, leavingAt) first.
func (s *Service) checkShrink(tx *store.Txn, node *models.Node, inv inventory) error {
	holders, err := s.store.HeldShares(tx, node.ID, models.HoldingStatuses)
	if err != nil || len(holders) == 0 {
		return err
	}
	var problems []string
	if inv.ClusterID != "" && inv.ClusterID != node.ClusterID {
		problems = append(problems, fmt.Sprintf("clusterId %q would move it out of cluster %q while %d workloads are placed on it",
			inv.ClusterID, node.ClusterID, len(holders)))
	}
	// Pods hold GPUs only; a plain VM holds its CPU, RAM and disk too
	// (the placement snapshot's host shares).
	var cpu, ram, disk int
	for _, h := range holders {
		if h.CapabilityTier != models.TierPod {
			cpu, ram, disk = cpu+h.CPUCores, ram+h.RAMGb, disk+h.DiskSizeGb
		}
	}
	for _, f := range []struct {
		name           string
		reported, held int
	}{{"cpuCores", inv.CPUCores, cpu}, {"ramGb", inv.RAMGb, ram}, {"diskGb", inv.DiskGb, disk}} {
		if f.reported > 0 && f.reported < f.held {
			problems = append(problems, fmt.Sprintf("%s %d is below the %d its VMs hold", f.name, f.reported, f.held))
		}
	}
	// A held GPU is named by itself, never by its holder: the refusal goes
	// to whoever reports the node, who is told what the node runs only
	// through its assignments, not which VM of which organization holds what.
	held, err := s.store.HeldGPUSlots(tx, node.ID)
	if err != nil {
		return err
	}
	reported := map[string]bool{}
	reportedIdx := map[int]bool{}
	for _, g := range inv.GPUs {
		reported[g.UUID] = true
		reportedIdx[g.Index] = true
	}
	for _, g := range held {
		// A row without a UUID is matched by its index (reconcileGPUs).
		if (g.UUID != "" && !reported[g.UUID]) || (g.UUID == "" && !reportedIdx[g.Idx]) {
			problems = append(problems, fmt.Sprintf("GPU %s (index %d), which a workload holds, is missing from it", orID(g.UUID, g.ID), g.Idx))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return shrinksHeld(node.Name, problems)
}

func orID(uuid, id string) string {
	if uuid != "" {
		return uuid
	}
	return id
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
