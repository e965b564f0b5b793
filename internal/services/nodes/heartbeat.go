package nodes

import (
	"context"
	"time"

	"gpugraph/internal/store"
	"gpugraph/models"
	"gpugraph/placement"
)

// What a heartbeat does (docs/contract.md#agent): it records the node's
// last heartbeat and agent version, its GPUs' failures, utilization and
// memory samples; a node that was offline comes back online and its
// node_lost VMs and pods resume (models.NodeBack); its workload reports
// move their rows (workloads.go). Decided here, written through the
// store's primitives in one transaction.

// heartbeat is a node's periodic report, checked (checkHeartbeat).
type heartbeat struct {
	NodeName     string
	AgentVersion string // "" leaves the stored one
	GPUs         []heartbeatGPU
	// Workloads is what the agent says of the VMs and pods it was told to
	// run (applyWorkloadReports).
	Workloads []workloadReport
	// Sequence: as inventory's.
	Sequence int64
}

// heartbeatGPU is one GPU's live state in a heartbeat.
type heartbeatGPU struct {
	UUID            string
	Health          models.GPUHealth
	FailedReason    string
	Utilization     int
	MemoryUsedBytes int64
}

// recordHeartbeat files hb as of now.
func (s *Service) recordHeartbeat(ctx context.Context, hb heartbeat, now time.Time) (outcome, error) {
	var out outcome
	err := s.store.InTx(ctx, func(tx *store.Txn) error {
		var e error
		out, e = s.heartbeatIn(tx, hb, now)
		return e
	})
	return out, err
}

func (s *Service) heartbeatIn(tx *store.Txn, hb heartbeat, now time.Time) (outcome, error) {
	// The VM rows this heartbeat may move, before the node's row (lock
	// order): those its workload reports name, those the node's loss
	// interrupted and those tearing down there. Rows that become one of
	// these after this read are left to the next heartbeat.
	named := make([]string, 0, len(hb.Workloads))
	for _, w := range hb.Workloads {
		named = append(named, w.ID)
	}
	back := models.Step(models.NodeBack)
	down, err := s.store.LockRowsOnNamedNode(tx, hb.NodeName, named, back.From, back.FromReason)
	if err != nil {
		return outcome{}, err
	}
	node, err := s.store.LockNodeByName(tx, hb.NodeName)
	if err != nil {
		return outcome{}, err
	}
	if node == nil {
		return outcome{}, nodeNotFound()
	}
	if err := s.advanceSequence(tx, node.ID, hb.Sequence); err != nil {
		return outcome{}, err
	}
	have, err := s.store.GPUStates(tx, node.ID)
	if err != nil {
		return outcome{}, err
	}
	ids := make(map[string]string, len(have))
	healthy := make(map[string]bool, len(have))
	for _, g := range have {
		if g.UUID != "" {
			ids[g.UUID] = g.ID
			healthy[g.ID] = g.Health == models.GPUHealthy
		}
	}
	// A GPU the inventory did not register refuses the whole heartbeat.
	for _, g := range hb.GPUs {
		if ids[g.UUID] == "" {
			return outcome{}, gpuNotFound(g.UUID)
		}
	}

	by := agentActor(node.Name)
	var evs []*models.NodeEvent
	u := store.NodeUpdate{LastHeartbeatAt: now, AgentVersion: hb.AgentVersion}
	if ev := comeOnline(node, &u, by, now); ev != nil {
		evs = append(evs, ev)
	}
	if err := s.store.UpdateNode(tx, node.ID, u); err != nil {
		return outcome{}, err
	}
	out := outcome{NodeID: node.ID, Status: node.Status, AgentVersion: node.AgentVersion}
	if hb.AgentVersion != "" {
		out.AgentVersion = hb.AgentVersion
	}
	if node.Status == models.NodeOnline {
		if out.Resumed, err = s.resume(tx, node, now); err != nil {
			return outcome{}, err
		}
	}
	if out.JobLost, err = s.applyWorkloadReports(tx, node, hb.Workloads, down, now); err != nil {
		return outcome{}, err
	}
	samples := make([]store.GPUSample, len(hb.GPUs))
	for i, g := range hb.GPUs {
		samples[i] = store.GPUSample{ID: ids[g.UUID], Utilization: g.Utilization, MemoryUsedBytes: g.MemoryUsedBytes}
	}
	if err := s.store.WriteGPUSamples(tx, samples, now); err != nil {
		return outcome{}, err
	}
	// A failed GPU is never healed by a report: the first reason stays
	// until an operator clears it.
	for _, g := range hb.GPUs {
		id := ids[g.UUID]
		if g.Health != models.GPUFailed || !healthy[id] {
			continue
		}
		reason := failedReason(g.FailedReason)
		failed, err := s.store.FailGPU(tx, id, reason)
		if err != nil {
			return outcome{}, err
		}
		if failed {
			evs = append(evs, models.GPUFailedEvent(node.ID, id, reason, by, now))
		}
	}
	// The failure is in the log in the transaction that writes it: a
	// subscriber sees it when this heartbeat commits.
	return out, s.store.AppendNodeEvents(tx, evs)
}

// A quiet heartbeat changes nothing but what every heartbeat writes (the
// node's last heartbeat, sequence and agent version) and its GPUs'
// samples: the node is online with nothing to resume or tear down, no GPU
// newly fails, and every workload report names a row the node runs that
// it leaves as it is. Most heartbeats of a fleet are quiet, and
// quietHeartbeat files one without heartbeatIn's transaction and locks:
// the workload reports are judged on the node's assignments, which the
// answer needs anyway, and the store writes the rest in one statement
// that checks, as it writes, what the database alone knows (store.RecordBeat).
// Anything else is left to recordHeartbeat, which decides it all again.
//
// Judged on rows read before the write, a report is filed as of that
// read: a row that moves afterwards is one the agent reports again in its
// next heartbeat, as it would if this one had come just before the move.

// quietHeartbeat files hb as of now and answers the report, when hb is
// quiet; ok=false when it is not (nothing was written).
func (s *Service) quietHeartbeat(ctx context.Context, hb heartbeat, now time.Time) (rep Report, ok bool, err error) {
	var as []store.Assignment
	if len(hb.Workloads) > 0 {
		if hb.AgentVersion == "" {
			return Report{}, false, nil // which rows it is told depends on the stored version
		}
		as, err = s.store.AssignmentsByName(ctx, hb.NodeName, assignedStatuses, placement.AgentAtLeast(hb.AgentVersion, MinAgentTeardown))
		if err != nil || !quietReports(as, hb.Workloads) {
			return Report{}, false, err
		}
	}
	back := models.Step(models.NodeBack)
	b := store.Beat{NodeName: hb.NodeName, Sequence: hb.Sequence, AgentVersion: hb.AgentVersion, At: now,
		GPUs: make([]store.BeatGPU, len(hb.GPUs)), ResumeFrom: back.From, ResumeReason: back.FromReason}
	for i, g := range hb.GPUs {
		b.GPUs[i] = store.BeatGPU{UUID: g.UUID, Failed: g.Health == models.GPUFailed, Utilization: g.Utilization, MemoryUsedBytes: g.MemoryUsedBytes}
	}
	nodeID, version, ok, err := s.store.RecordBeat(ctx, b)
	if err != nil || !ok {
		return Report{}, false, err
	}
	rep = Report{NodeID: nodeID, Status: models.NodeOnline}
	if len(hb.Workloads) == 0 {
		rep, err = s.answer(ctx, rep, version)
		return rep, err == nil, err
	}
	rep.Workloads = assignmentsOf(as)
	return rep, true, nil
}

// quietReports reports whether every report leaves its row as it is: it
// names a row of as (the node's assignments) not tearing down, and either
// another generation of it (ignored) or one it neither moves, stages nor
// gives an endpoint (applyWorkloadReports' decisions, on the same rows).
func quietReports(as []store.Assignment, reports []workloadReport) bool {
	byID := make(map[string]*store.Assignment, len(as))
	for i := range as {
		byID[as[i].ID] = &as[i]
	}
	for _, r := range reports {
		a := byID[r.ID]
		if a == nil || a.TearingDown {
			return false
		}
		if a.Generation != r.Generation {
			continue
		}
		vm := &models.VM{ID: a.ID, Status: a.Status, Generation: a.Generation, Action: a.Action,
			ProvisioningStage: a.Stage, EndpointURL: a.EndpointURL}
		if a.Pod {
			vm.CapabilityTier = models.TierPod
		}
		if movesEndpoint(vm, r) || stageOf(vm, r) != "" {
			return false
		}
		// A transition it names is left to the full report, whether or
		// not the row's kind and reason allow it.
		if name, _ := workloadTransition(vm, r); name != "" {
			return false
		}
	}
	return true
}
