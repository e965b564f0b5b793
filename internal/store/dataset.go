package store

import (
	"fmt"
	"slices"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"gpugraph/models"
)

// The statements behind the data set loader (package dataset). The loader
// checks a whole file against itself and against what is stored, then
// writes it, all in one InTx: a file refused half-way writes nothing, and a
// load that lost a race to another writer is replayed whole.

// dataSetBatch keeps every insert and IN list under SQLite's bound-parameter
// limit, whatever the width of the row.
const dataSetBatch = 400

// DataSet is a checked data set, in the shape the tables take.
type DataSet struct {
	GPUModels     []models.GPUModel
	InstanceTypes []models.InstanceType
	Fabrics       []models.Fabric
	Nodes         []models.Node
	Organizations []models.Organization
	APIKeys       []models.APIKey
	// Credits are appended to the ledger unless their organization has an
	// entry of their idempotency key already.
	Credits []*models.LedgerEntry
	VMs     []models.VM
	GPUs    []models.GPU
	// Holders is, for each VM of the data set, exactly the GPUs it holds:
	// the VM gives up any other it held before.
	Holders          map[string][]string
	Projects         []models.Project
	Workloads        []models.Workload
	Revisions        []models.Revision
	Pods             []models.Pod
	MetricSamples    []models.MetricSample
	HistogramSamples []models.HistogramSample
}

// WriteDataSet writes d, replacing the rows with the same keys, in the order
// the foreign keys ask for. The error names the table that refused a row.
func (s *Store) WriteDataSet(tx *Txn, d *DataSet) error {
	db := tx.db
	steps := []struct {
		name string
		run  func() error
	}{
		{"gpuModels", func() error { return upsertAll(db, d.GPUModels, nil) }},
		{"instanceTypes", func() error { return upsertAll(db, d.InstanceTypes, nil) }},
		{"fabrics", func() error { return upsertAll(db, d.Fabrics, nil) }},
		{"nodes", func() error { return upsertAll(db, d.Nodes, nil) }},
		{"organizations", func() error { return upsertAll(db, d.Organizations, nil) }},
		{"apiKeys", func() error { return upsertAll(db, d.APIKeys, []string{"token_hash"}) }},
		{"credits", func() error { _, err := s.AppendLedger(tx, d.Credits); return err }},
		{"vms", func() error { return upsertAll(db, d.VMs, nil) }},
		// A GPU row's holder, utilization and health history belong to the
		// running system; a data set that names a GPU again replaces only
		// what the data set says about it.
		{"gpus", func() error {
			return upsertColumns(db, d.GPUs, []string{"node_id", "idx", "uuid", "address", "model_id", "health", "failed_reason"})
		}},
		{"gpu holders", func() error { return writeHolders(db, d.Holders) }},
		{"volumes", func() error { return writeVolumes(db, d.VMs, Now()) }},
		{"projects", func() error { return upsertAll(db, d.Projects, nil) }},
		{"workloads", func() error { return upsertAll(db, d.Workloads, nil) }},
		{"revisions", func() error { return upsertAll(db, d.Revisions, nil) }},
		{"pods", func() error { return upsertAll(db, d.Pods, nil) }},
		{"samples", func() error { return s.WriteSamples(tx, d.MetricSamples, d.HistogramSamples) }},
	}
	for _, step := range steps {
		if err := step.run(); err != nil {
			return fmt.Errorf("write %s: %w", step.name, err)
		}
	}
	return nil
}

// referable are the tables a data set's rows may point into by id.
// (A project is referred to by its tenant and id: StoredProjects.)
var referable = map[string]bool{
	"gpu_models": true, "fabrics": true, "nodes": true, "organizations": true, "vms": true,
	"workloads": true, "revisions": true, "pods": true,
}

// StoredIDs answers which of ids are rows of table (one of the tables a data
// set refers to by id: gpu_models, fabrics, nodes, organizations, vms,
// workloads, revisions, pods).
func (s *Store) StoredIDs(tx *Txn, table string, ids []string) (map[string]bool, error) {
	if !referable[table] {
		return nil, fmt.Errorf("store: %q is not a table a data set refers to", table)
	}
	found := map[string]bool{}
	for chunk := range slices.Chunk(ids, dataSetBatch) {
		var got []string
		if err := tx.db.Table(table).Where("id IN ?", chunk).Pluck("id", &got).Error; err != nil {
			return nil, err
		}
		for _, id := range got {
			found[id] = true
		}
	}
	return found, nil
}

// StoredProjects reads the stored projects, of every tenant, whose id is
// in ids: a project id is its tenant's own, so one id may be several
// tenants' projects.
func (s *Store) StoredProjects(tx *Txn, ids []string) ([]models.Project, error) {
	var out []models.Project
	for chunk := range slices.Chunk(ids, dataSetBatch) {
		var rows []models.Project
		if err := tx.db.Where("id IN ?", chunk).Order("tenant_id, id").Find(&rows).Error; err != nil {
			return nil, err
		}
		out = append(out, rows...)
	}
	return out, nil
}

// NamesByID reads the names of the rows of table (workloads) whose id is
// in ids; an id with no row is left out.
func (s *Store) NamesByID(tx *Txn, table string, ids []string) (map[string]string, error) {
	if table != "workloads" {
		return nil, fmt.Errorf("store: %q has no names to read by id", table)
	}
	out := map[string]string{}
	for chunk := range slices.Chunk(ids, dataSetBatch) {
		var found []struct{ ID, Name string }
		if err := tx.db.Table(table).Select("id, name").Where("id IN ?", chunk).Find(&found).Error; err != nil {
			return nil, err
		}
		for _, r := range found {
			out[r.ID] = r.Name
		}
	}
	return out, nil
}

// GPUPlacements reads where the stored GPUs among ids are and who holds
// them: only ID, NodeID, ModelID and HolderVMID are filled.
func (s *Store) GPUPlacements(tx *Txn, ids []string) ([]models.GPU, error) {
	var out []models.GPU
	for chunk := range slices.Chunk(ids, dataSetBatch) {
		var stored []models.GPU
		if err := tx.db.Select("id", "node_id", "model_id", "holder_vm_id").Where("id IN ?", chunk).Find(&stored).Error; err != nil {
			return nil, err
		}
		out = append(out, stored...)
	}
	return out, nil
}

// upsertAll inserts rows in batches, replacing every column of a row whose
// key (the primary key when key is nil) exists.
func upsertAll[T any](db *gorm.DB, rows []T, key []string) error {
	if len(rows) == 0 {
		return nil
	}
	oc := clause.OnConflict{UpdateAll: true}
	if key != nil {
		oc.Columns = columnsNamed(key)
	}
	return db.Clauses(oc).CreateInBatches(rows, dataSetBatch).Error
}

// upsertColumns inserts rows, replacing only cols of a row whose id exists.
func upsertColumns[T any](db *gorm.DB, rows []T, cols []string) error {
	if len(rows) == 0 {
		return nil
	}
	oc := clause.OnConflict{Columns: columnsNamed([]string{"id"}), DoUpdates: clause.AssignmentColumns(cols)}
	return db.Clauses(oc).CreateInBatches(rows, dataSetBatch).Error
}

func columnsNamed(names []string) []clause.Column {
	out := make([]clause.Column, len(names))
	for i, n := range names {
		out[i] = clause.Column{Name: n}
	}
	return out
}

// writeHolders makes each VM of holders hold exactly the GPUs it lists.
func writeHolders(db *gorm.DB, holders map[string][]string) error {
	if len(holders) == 0 {
		return nil
	}
	vmIDs := make([]string, 0, len(holders))
	for id := range holders {
		vmIDs = append(vmIDs, id)
	}
	for chunk := range slices.Chunk(vmIDs, dataSetBatch) {
		if err := db.Model(&models.GPU{}).Where("holder_vm_id IN ?", chunk).Update("holder_vm_id", nil).Error; err != nil {
			return err
		}
	}
	for vmID, gpuIDs := range holders {
		if len(gpuIDs) == 0 {
			continue
		}
		if err := db.Model(&models.GPU{}).Where("id IN ?", gpuIDs).Update("holder_vm_id", vmID).Error; err != nil {
			return err
		}
	}
	return nil
}
