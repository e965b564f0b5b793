package store

import (
	"time"

	"gorm.io/gorm/clause"

	"gpugraph/models"
)

// The GPU and catalog statements of the node agent's reports, run inside
// the report's transaction after its node's row lock (agent.go). Package
// nodes decides what they write: how an inventory's GPUs match the rows,
// which GPUs fail, which catalog entries are added.

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
	err := tx.db.Table("gpus").Select("id, uuid, health").Where("node_id = ?", nodeID).Scan(&have).Error
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
		Where("node_id = ? AND holder_vm_id IS NOT NULL", nodeID).Order("idx").Scan(&held).Error
	return held, err
}

// ForeignGPU is a GPU of another node than the reporting one.
type ForeignGPU struct{ ID, UUID, NodeName string }

// ForeignGPUs reads the GPUs of nodes other than nodeID whose UUID or id
// is one of uuids, with their node's name.
func (s *Store) ForeignGPUs(tx *Txn, nodeID string, uuids []string) ([]ForeignGPU, error) {
	var rows []ForeignGPU
	err := tx.db.Raw(`SELECT g.id, g.uuid, n.name AS node_name FROM gpus g JOIN nodes n ON n.id = g.node_id
		WHERE g.node_id <> ? AND (g.uuid IN ? OR g.id IN ?)`, nodeID, uuids, uuids).Scan(&rows).Error
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

// GPUModelsByName reads, by id, the catalog entries named one of names.
func (s *Store) GPUModelsByName(tx *Txn, names []string) ([]models.GPUModel, error) {
	var known []models.GPUModel
	err := tx.db.Where("name IN ?", names).Order("id").Find(&known).Error
	return known, err
}

// GPUModel reads the catalog entry id inside tx; nil when there is none.
// It is the one reader of a model by id: the placing, stopping and quota
// transactions and a report naming its GPUs all read it in the
// transaction whose decision it feeds; a read outside any transaction (a
// quota's answer) batches through GPUModelsByIDs, as the loaders do.
func (s *Store) GPUModel(tx *Txn, id string) (*models.GPUModel, error) {
	var m []models.GPUModel
	if err := tx.db.Where("id = ?", id).Limit(1).Find(&m).Error; err != nil {
		return nil, err
	}
	if len(m) == 0 {
		return nil, nil
	}
	return &m[0], nil
}

// AddGPUModel inserts a catalog entry unless its id is taken: a concurrent
// report may add the same entry, and its row is then the caller's.
func (s *Store) AddGPUModel(tx *Txn, m *models.GPUModel) error {
	return tx.db.Clauses(clause.OnConflict{DoNothing: true}).Create(m).Error
}
