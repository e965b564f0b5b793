package store

import (
	"context"

	"gpugraph/models"
)

// What a node agent is told to run (docs/contract.md#agent). What its
// reports of each workload do is package nodes' to decide; it moves the
// rows with LockVMsOnNode and Apply inside the heartbeat's transaction.

// Assignment is one VM or pod that should run on a node.
type Assignment struct {
	ID         string
	Generation int
	GPUUUIDs   []string
}

// Assignments lists, by id, node nodeID's rows in one of statuses with the
// UUIDs of the GPUs they hold; none while the node is removed.
func (s *Store) Assignments(ctx context.Context, nodeID string, statuses []models.VMStatus) ([]Assignment, error) {
	db := s.WithContext(ctx)
	var rows []struct {
		ID         string
		Generation int
	}
	err := db.Table("vms").Select("vms.id, vms.generation").
		Joins("JOIN nodes ON nodes.id = vms.node_id").
		Where("vms.node_id = ? AND vms.status IN ? AND vms.deleted_at IS NULL AND nodes.status <> ?",
			nodeID, statuses, models.NodeRemoved).
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
