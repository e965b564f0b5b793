package store

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"time"

	"gorm.io/gorm/clause"

	"gpugraph/models"
)

// GPU rows: what a node agent's report writes of its GPUs (inside the
// report's transaction, after its node's row lock), the claim a placement
// takes on free GPUs, and the reads behind the API's lists and loaders.

// NodeGPUs reads node nodeID's GPU rows, by index.
func (s *Store) NodeGPUs(tx *Txn, nodeID string) ([]*models.GPU, error) {
	var have []*models.GPU
	err := tx.db.Where("node_id = ?", nodeID).Order("idx").Find(&have).Error
	return have, err
}

// GPUState is one GPU's health, keyed by its NVML UUID.
type GPUState struct {
	ID     string
	UUID   string
	Health models.GPUHealth
}

// GPUStates reads the id, UUID and health of node nodeID's GPUs.
func (s *Store) GPUStates(tx *Txn, nodeID string) ([]GPUState, error) {
	var have []GPUState
	err := tx.db.Table("gpus").Select("id, uuid, health").Where("node_id = ?", nodeID).Find(&have).Error
	return have, err
}

// GPUSlot is a GPU by id, UUID and index.
type GPUSlot struct {
	ID   string
	UUID string
	Idx  int
}

// HeldGPUSlots reads, by index, node nodeID's GPUs that a workload holds.
// The holder is not read: a report's refusal names the GPU only.
func (s *Store) HeldGPUSlots(tx *Txn, nodeID string) ([]GPUSlot, error) {
	var held []GPUSlot
	err := tx.db.Table("gpus").Select("id, uuid, idx").
		Where("node_id = ? AND holder_vm_id IS NOT NULL", nodeID).Order("idx").Find(&held).Error
	return held, err
}

// ForeignGPU is a GPU of another node than the reporting one.
type ForeignGPU struct{ ID, UUID, NodeName string }

// ForeignGPUs reads the GPUs of nodes other than nodeID whose UUID or id
// is one of uuids, with their node's name.
func (s *Store) ForeignGPUs(tx *Txn, nodeID string, uuids []string) ([]ForeignGPU, error) {
	var rows []ForeignGPU
	err := tx.db.Raw(`SELECT g.id, g.uuid, n.name AS node_name FROM gpus g JOIN nodes n ON n.id = g.node_id
		WHERE g.node_id <> ? AND (g.uuid IN ? OR g.id IN ?)`, nodeID, uuids, uuids).Find(&rows).Error
	return rows, err
}

// SetGPUIndex moves GPU id to index idx, alone: a reconciliation steps
// moving rows aside to free (negative) indexes first, since indexes are
// unique per node.
func (s *Store) SetGPUIndex(tx *Txn, id string, idx int) error {
	return tx.db.Exec("UPDATE gpus SET idx = ? WHERE id = ?", idx, id).Error
}

// GPUUpdate is what a reconciliation writes to one GPU row; a zero field
// (a nil Index) is left as it is.
type GPUUpdate struct {
	UUID, Address string
	Health        models.GPUHealth
	FailedReason  string
	Index         *int
}

// UpdateGPU writes u to GPU id in one statement; an empty u writes nothing.
func (s *Store) UpdateGPU(tx *Txn, id string, u GPUUpdate) error {
	set := map[string]any{}
	for col, v := range map[string]string{"uuid": u.UUID, "address": u.Address, "health": string(u.Health), "failed_reason": u.FailedReason} {
		if v != "" {
			set[col] = v
		}
	}
	if u.Index != nil {
		set["idx"] = *u.Index
	}
	if len(set) == 0 {
		return nil
	}
	return tx.db.Table("gpus").Where("id = ?", id).Updates(set).Error
}

// CreateGPUs inserts rows in one statement; none is nothing.
func (s *Store) CreateGPUs(tx *Txn, rows []models.GPU) error {
	if len(rows) == 0 {
		return nil
	}
	return tx.db.Create(&rows).Error
}

// FailGPU marks GPU id failed with reason when it is healthy, and reports
// whether it was. A failed GPU is never written again by a report: the
// first reason stays until an operator clears it.
func (s *Store) FailGPU(tx *Txn, id, reason string) (bool, error) {
	res := tx.db.Exec("UPDATE gpus SET health = ?, failed_reason = ? WHERE id = ? AND health = ?",
		models.GPUFailed, reason, id, models.GPUHealthy)
	return res.RowsAffected > 0, res.Error
}

// GPUSample is one GPU's latest utilization and memory in use.
type GPUSample struct {
	ID              string
	Utilization     int
	MemoryUsedBytes int64
}

// WriteGPUSamples stores every sample, sampled at now, in one statement.
// The SQL is fixed text; only placeholders vary in number.
func (s *Store) WriteGPUSamples(tx *Txn, samples []GPUSample, now time.Time) error {
	if len(samples) == 0 {
		return nil
	}
	util := make([]any, 0, 2*len(samples))
	mem := make([]any, 0, 2*len(samples))
	in := make([]string, 0, len(samples))
	utilCase, memCase := "", ""
	for _, g := range samples {
		utilCase += " WHEN ? THEN CAST(? AS integer)"
		memCase += " WHEN ? THEN CAST(? AS bigint)"
		util = append(util, g.ID, g.Utilization)
		mem = append(mem, g.ID, g.MemoryUsedBytes)
		in = append(in, g.ID)
	}
	sql := "UPDATE gpus SET utilization = CASE id" + utilCase + " END, memory_used_bytes = CASE id" + memCase +
		" END, sampled_at = ? WHERE id IN ?"
	args := append(append(util, mem...), now, in)
	return tx.db.Exec(sql, args...).Error
}

// GPUsByNodeIDs reads the GPUs of these nodes, by node and index: of their
// columns, cols (nil: all; the node and the model always).
func (s *Store) GPUsByNodeIDs(ctx context.Context, nodeIDs []string, cols Columns) ([]*models.GPU, error) {
	cond, arg := s.in("node_id", nodeIDs)
	return gpus.read(ctx, s, cols, []string{"node_id"}, cond+` ORDER BY node_id, idx`, arg)
}

// GPUsByHolders reads the GPUs held by these VMs, by index.
func (s *Store) GPUsByHolders(ctx context.Context, vmIDs []string, cols Columns) ([]*models.GPU, error) {
	cond, arg := s.in("holder_vm_id", vmIDs)
	return gpus.read(ctx, s, cols, []string{"holder_vm_id"}, cond+` ORDER BY node_id, idx`, arg)
}

// GPUQuery narrows the GPU list; "" and nil leave a field free.
type GPUQuery struct {
	Health  *models.GPUHealth
	ModelID string
	NodeID  string
}

// GPUSort is the GPUs' keyset order: by node, then index.
var GPUSort = []SortKey{{Column: "node_id"}, {Column: "idx"}}

// GPUsAfter lists GPUs by node and index after a (nil: from the first), at
// most limit, and whether more follow; total counts every match when count.
func (s *Store) GPUsAfter(ctx context.Context, q GPUQuery, a *After, limit int, count bool) ([]*models.GPU, bool, int64, error) {
	db := s.WithContext(ctx).Model(&models.GPU{})
	if q.Health != nil {
		db = db.Where("health = ?", *q.Health)
	}
	if q.ModelID != "" {
		db = db.Where("model_id = ?", q.ModelID)
	}
	if q.NodeID != "" {
		db = db.Where("node_id = ?", q.NodeID)
	}
	out := []*models.GPU{}
	return keysetPage(db, GPUSort, a, limit, count, &out)
}

// ErrClaimLost says that a GPU claim took fewer GPUs than it asked for:
// someone else holds one, one failed, or one is not where the snapshot
// said. The transaction must roll back.
var ErrClaimLost = errors.New("store: a GPU claim lost a race")

// ClaimGPUs makes vmID hold exactly the GPUs ids of node nodeID and model
// modelID: it lets go of any other GPU it still holds, then takes these
// with a conditional UPDATE whose affected row count must equal len(ids),
// else ErrClaimLost. One holder column per GPU and this count are what
// guard against double booking besides the locks.
func (s *Store) ClaimGPUs(tx *Txn, vmID, nodeID, modelID string, ids []string) error {
	release := tx.db.Model(&models.GPU{}).Where("holder_vm_id = ?", vmID)
	if len(ids) > 0 {
		release = release.Where("id NOT IN ?", ids)
	}
	if err := release.Update("holder_vm_id", nil).Error; err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	res := tx.db.Model(&models.GPU{}).
		Where("id IN ? AND node_id = ? AND model_id = ? AND health = ? AND (holder_vm_id IS NULL OR holder_vm_id = ?)",
			ids, nodeID, modelID, models.GPUHealthy, vmID).
		Update("holder_vm_id", vmID)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected != int64(len(ids)) {
		slog.Warn("GPU claim lost a race; replaying", "vm", vmID, "node", nodeID,
			"wanted", len(ids), "claimed", res.RowsAffected)
		return ErrClaimLost
	}
	return nil
}

// ClaimFreeGPUs makes vmID, a row inserted in this transaction that holds
// nothing yet, hold exactly the GPUs ids of node nodeID and model modelID,
// and answers them as they are after the claim, by index: one conditional
// UPDATE … RETURNING, whose rows must number len(ids), else ErrClaimLost
// (as ClaimGPUs; there is nothing of vmID's to let go of first, nor to read
// back after).
func (s *Store) ClaimFreeGPUs(tx *Txn, vmID, nodeID, modelID string, ids []string) ([]*models.GPU, error) {
	held := []*models.GPU{}
	if len(ids) == 0 {
		return held, nil
	}
	res := tx.db.Model(&held).Clauses(clause.Returning{}).
		Where("id IN ? AND node_id = ? AND model_id = ? AND health = ? AND holder_vm_id IS NULL",
			ids, nodeID, modelID, models.GPUHealthy).
		Update("holder_vm_id", vmID)
	if res.Error != nil {
		return nil, res.Error
	}
	if res.RowsAffected != int64(len(ids)) || len(held) != len(ids) {
		slog.Warn("GPU claim lost a race; replaying", "vm", vmID, "node", nodeID,
			"wanted", len(ids), "claimed", res.RowsAffected)
		return nil, ErrClaimLost
	}
	slices.SortFunc(held, func(a, b *models.GPU) int { return a.Index - b.Index })
	return held, nil
}

// HeldGPUs reads the GPUs vmID holds, by node and index; never nil.
func (s *Store) HeldGPUs(tx *Txn, vmID string) ([]*models.GPU, error) {
	gpus := []*models.GPU{}
	if err := tx.db.Where("holder_vm_id = ?", vmID).Order("node_id, idx").Find(&gpus).Error; err != nil {
		return nil, err
	}
	return gpus, nil
}
