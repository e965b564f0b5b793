package store

import (
	"context"
	"slices"
	"time"

	"gorm.io/gorm"

	"gpugraph/models"
)

// What a node agent is told to run, and what its reports of each workload
// do (docs/contract.md#agent). The reports are applied inside the
// heartbeat's transaction, after the node's row lock: a report moves only
// rows on the reporting node, of the generation it names.

// WorkloadState is what an agent says of one workload it was assigned.
type WorkloadState string

const (
	WorkloadStarting WorkloadState = "starting"
	WorkloadRunning  WorkloadState = "running"
	WorkloadExited   WorkloadState = "exited"
	WorkloadFailed   WorkloadState = "failed"
)

// WorkloadReport is one workload's state in a Heartbeat.
type WorkloadReport struct {
	ID         string
	Generation int
	State      WorkloadState
	Message    string // one sentence, for exited and failed
}

// LostJob is a pod that lost its job on a live node (models.PodJobLost) in
// a heartbeat; the platform re-submits it afterwards.
type LostJob struct {
	ID             string
	OrganizationID string
}

// Assignment is one VM or pod that should run on a node.
type Assignment struct {
	ID         string
	Generation int
	GPUUUIDs   []string
}

// AssignedStatuses are the statuses whose rows an agent runs: a deploying
// row is to be started, a running one kept running. Interrupted rows are
// not: node_lost ones resume when their node reports (models.NodeBack)
// and appear here then; job-lost ones are re-submitted (deploying) first.
var AssignedStatuses = []models.VMStatus{models.VMDeploying, models.VMRunning}

// defaultExitSentences stand in for an agent that gave no message.
const (
	exitedBeforeRunning = "it exited before the node agent saw it running."
)

// workloadTransition is what a report of state does to vm, and the detail
// its reason carries; "" when it does nothing.
func workloadTransition(vm *models.VM, r WorkloadReport) (models.TransitionName, string) {
	switch {
	case vm.Status == models.VMDeploying && r.State == WorkloadRunning:
		return models.AgentRunning, ""
	case vm.Status == models.VMDeploying && r.State == WorkloadFailed:
		return models.AgentFailedStart, r.Message
	case vm.Status == models.VMDeploying && r.State == WorkloadExited:
		// It ended before it ever ran: a failed start all the same.
		msg := r.Message
		if msg == "" {
			msg = exitedBeforeRunning
		}
		return models.AgentFailedStart, msg
	case vm.Status == models.VMRunning && (r.State == WorkloadExited || r.State == WorkloadFailed):
		// A pod's runtime is the platform's: it lost its job and is
		// re-submitted. A plain VM that ends (or crashes) is the owner's
		// own shutdown as far as the platform can tell.
		if vm.IsPod() {
			return models.PodJobLost, ""
		}
		return models.VMExited, ""
	}
	return "", ""
}

// applyWorkloadReports applies each report about a row on node of the
// generation it names; reports about other nodes' rows, earlier
// generations or unknown ids are ignored. It answers the pods that lost
// their job.
func (s *Store) applyWorkloadReports(tx *gorm.DB, node *models.Node, reports []WorkloadReport, now time.Time) ([]LostJob, error) {
	if len(reports) == 0 {
		return nil, nil
	}
	ids := make([]string, 0, len(reports))
	for _, r := range reports {
		ids = append(ids, r.ID)
	}
	slices.Sort(ids)
	var vms []models.VM
	if err := s.forUpdate(tx.Where("node_id = ? AND id IN ? AND deleted_at IS NULL", node.ID, slices.Compact(ids))).
		Order("id").Find(&vms).Error; err != nil {
		return nil, err
	}
	byID := make(map[string]*models.VM, len(vms))
	for i := range vms {
		byID[vms[i].ID] = &vms[i]
	}
	actor := models.Actor{Kind: models.ActorAgent, ID: node.Name}
	var lost []LostJob
	for _, r := range reports {
		vm := byID[r.ID]
		if vm == nil || vm.Generation != r.Generation {
			continue
		}
		name, detail := workloadTransition(vm, r)
		if name == "" || !models.Step(name).Allows(vm) {
			continue
		}
		if _, err := s.Apply(&Txn{db: tx, st: s}, vm, Change{Transition: name, Actor: actor, Detail: detail}, now); err != nil {
			return nil, err
		}
		if name == models.PodJobLost {
			lost = append(lost, LostJob{ID: vm.ID, OrganizationID: vm.OrganizationID})
		}
	}
	return lost, nil
}

// Assignments lists what should run on node nodeID, by id: its rows in an
// AssignedStatuses status with the UUIDs of the GPUs they hold. A removed
// node runs nothing.
func (s *Store) Assignments(ctx context.Context, nodeID string) ([]Assignment, error) {
	db := s.WithContext(ctx)
	var rows []struct {
		ID         string
		Generation int
	}
	err := db.Table("vms").Select("vms.id, vms.generation").
		Joins("JOIN nodes ON nodes.id = vms.node_id").
		Where("vms.node_id = ? AND vms.status IN ? AND vms.deleted_at IS NULL AND nodes.status <> ?",
			nodeID, AssignedStatuses, models.NodeRemoved).
		Order("vms.id").Scan(&rows).Error
	if err != nil || len(rows) == 0 {
		return []Assignment{}, err
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	var gpus []struct {
		HolderVMID string
		UUID       string
	}
	if err := db.Table("gpus").Select("holder_vm_id, uuid").
		Where("node_id = ? AND holder_vm_id IN ? AND uuid <> ''", nodeID, ids).
		Order("idx").Scan(&gpus).Error; err != nil {
		return nil, err
	}
	held := map[string][]string{}
	for _, g := range gpus {
		held[g.HolderVMID] = append(held[g.HolderVMID], g.UUID)
	}
	out := make([]Assignment, len(rows))
	for i, r := range rows {
		out[i] = Assignment{ID: r.ID, Generation: r.Generation, GPUUUIDs: held[r.ID]}
		if out[i].GPUUUIDs == nil {
			out[i].GPUUUIDs = []string{}
		}
	}
	return out, nil
}
