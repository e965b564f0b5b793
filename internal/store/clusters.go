package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"gpugraph/models"
)

// Cluster connectors (package clustersync): each cluster's credential, by
// its hash, and its ingestion state, one row a cluster (cluster_syncs).
// The statements are the steps clustersync.Service.Sync takes inside one
// InTx: lock the cluster's row, read what the batch names, write it.

// ClusterSync is one cluster's row.
type ClusterSync struct {
	ClusterID    string
	TenantID     int
	SecretHash   *string // nil once revoked
	LastSequence int64
	LastBodyHash string
	LastAnswer   string
	Batches      int64
	SnapshotMark int64
}

// ErrClusterOfOtherTenant refuses enrolling a cluster for a tenant other
// than the one its pods are stored for.
var ErrClusterOfOtherTenant = errors.New("cluster enrolled for another tenant")

// TenantExists reports whether an organization holds Run:ai tenant id.
func (s *Store) TenantExists(ctx context.Context, tenantID int) (bool, error) {
	return s.exists(ctx, "SELECT 1 FROM organizations WHERE tenant_id = ?", tenantID)
}

// EnrollCluster makes secretHash cluster clusterID's credential for
// tenantID, replacing any earlier one and starting its sequence afresh. A
// cluster stays its first tenant's: another is ErrClusterOfOtherTenant.
func (s *Store) EnrollCluster(ctx context.Context, clusterID string, tenantID int, secretHash, createdBy string, now time.Time) error {
	return s.tx(ctx, func(tx *gorm.DB) error {
		var rows []ClusterSync
		if err := s.forUpdate(tx.Table("cluster_syncs")).Where("cluster_id = ?", clusterID).Find(&rows).Error; err != nil {
			return err
		}
		if len(rows) == 1 {
			if rows[0].TenantID != tenantID {
				return ErrClusterOfOtherTenant
			}
			return tx.Exec(`UPDATE cluster_syncs SET secret_hash = ?, created_by = ?, enrolled_at = ?,
				last_sequence = 0, last_body_hash = '', last_answer = '', snapshot_mark = 0 WHERE cluster_id = ?`,
				secretHash, createdBy, now, clusterID).Error
		}
		return tx.Table("cluster_syncs").Create(map[string]any{"cluster_id": clusterID, "tenant_id": tenantID,
			"secret_hash": secretHash, "created_by": createdBy, "enrolled_at": now}).Error
	})
}

// RevokeCluster drops cluster clusterID's credential; false when it had
// none. Its state and pods stay.
func (s *Store) RevokeCluster(ctx context.Context, clusterID string) (bool, error) {
	res := s.DB.WithContext(ctx).Exec("UPDATE cluster_syncs SET secret_hash = NULL WHERE cluster_id = ? AND secret_hash IS NOT NULL", clusterID)
	return res.RowsAffected == 1, res.Error
}

// ClusterBySecret reads the cluster whose credential hashes to secretHash.
func (s *Store) ClusterBySecret(ctx context.Context, secretHash string) (ClusterSync, bool, error) {
	var rows []ClusterSync
	err := s.DB.WithContext(ctx).Table("cluster_syncs").Where("secret_hash = ?", secretHash).Find(&rows).Error
	if err != nil || len(rows) == 0 {
		return ClusterSync{}, false, err
	}
	return rows[0], true, nil
}

// LockClusterSync reads and locks cluster clusterID's row for the rest of
// tx, so that its batches apply one at a time and in order.
func (s *Store) LockClusterSync(tx *Txn, clusterID string) (ClusterSync, bool, error) {
	var rows []ClusterSync
	err := s.forUpdate(tx.db.Table("cluster_syncs")).Where("cluster_id = ?", clusterID).Find(&rows).Error
	if err != nil || len(rows) == 0 {
		return ClusterSync{}, false, err
	}
	return rows[0], true, nil
}

// SaveClusterSync writes c's sequence, answer and marks back.
func (s *Store) SaveClusterSync(tx *Txn, c ClusterSync) error {
	return tx.db.Exec(`UPDATE cluster_syncs SET last_sequence = ?, last_body_hash = ?, last_answer = ?, batches = ?, snapshot_mark = ?
		WHERE cluster_id = ?`, c.LastSequence, c.LastBodyHash, c.LastAnswer, c.Batches, c.SnapshotMark, c.ClusterID).Error
}

// Owner is who a stored project, workload or pod belongs to.
type Owner struct {
	ID        string
	TenantID  int
	ClusterID string // "" for a project
	ProjectID string // a workload's
	Name      string
}

// ProjectOwners reads the tenant's stored projects among ids. A project
// id is the tenant's own: another tenant's project of the same id is
// another project, not read here.
func (s *Store) ProjectOwners(tx *Txn, tenantID int, ids []string) (map[string]Owner, error) {
	return owners(tx.db, "SELECT id, tenant_id, name FROM projects WHERE tenant_id = ? AND id IN ?", ids, tenantID)
}

// TenantProjectCount counts the tenant's stored projects.
func (s *Store) TenantProjectCount(tx *Txn, tenantID int) (int64, error) {
	var n int64
	return n, tx.db.Raw("SELECT COUNT(*) FROM projects WHERE tenant_id = ?", tenantID).Find(&n).Error
}

// WorkloadOwners reads the stored workloads among ids.
func (s *Store) WorkloadOwners(tx *Txn, ids []string) (map[string]Owner, error) {
	return owners(tx.db, "SELECT id, tenant_id, cluster_id, project_id, name FROM workloads WHERE id IN ?", ids)
}

// RevisionWorkloads reads the workload of each stored revision among ids.
func (s *Store) RevisionWorkloads(tx *Txn, ids []string) (map[string]string, error) {
	out := map[string]string{}
	for chunk := range slices.Chunk(ids, dataSetBatch) {
		var rows []models.Revision
		if err := tx.db.Table("revisions").Where("id IN ?", chunk).Find(&rows).Error; err != nil {
			return nil, err
		}
		for _, r := range rows {
			out[r.ID] = r.WorkloadID
		}
	}
	return out, nil
}

// owners runs sql, whose last parameter is a list of ids, over ids in
// chunks, args its parameters before that.
func owners(db *gorm.DB, sql string, ids []string, args ...any) (map[string]Owner, error) {
	out := map[string]Owner{}
	for chunk := range slices.Chunk(ids, dataSetBatch) {
		var rows []Owner
		if err := db.Raw(sql, append(args[:len(args):len(args)], chunk)...).Find(&rows).Error; err != nil {
			return nil, err
		}
		for _, r := range rows {
			out[r.ID] = r
		}
	}
	return out, nil
}

// StoredPods reads the stored pods among ids, every column.
func (s *Store) StoredPods(tx *Txn, ids []string) (map[string]*models.Pod, error) {
	out := map[string]*models.Pod{}
	for chunk := range slices.Chunk(ids, dataSetBatch) {
		var rows []*models.Pod
		if err := tx.db.Where("id IN ?", chunk).Find(&rows).Error; err != nil {
			return nil, err
		}
		for _, p := range rows {
			out[p.ID] = p
		}
	}
	return out, nil
}

// ClusterWrites is what one batch of cluster ClusterID of tenant TenantID
// writes, all inside its transaction.
type ClusterWrites struct {
	TenantID  int
	ClusterID string
	Projects  []models.Project  // the tenant's
	Workloads []models.Workload // the cluster's
	Revisions []models.Revision // created when missing
	Pods      []models.Pod      // the cluster's, replaced whole
	// Seen are the ids of pods the batch named, changed or not: their
	// sync_mark becomes Mark.
	Seen []string
	Mark int64
}

// RowsOfOtherOwner is WriteCluster's refusal of rows the batch would have
// replaced that are another cluster's or tenant's: a workload or pod with
// the same id, or a revision with the same id of another workload. The
// batch's reads saw none of them; another transaction wrote them between
// its read and its write (two clusters reporting one new pod id at once).
// The write itself keeps them: nothing of theirs is replaced.
type RowsOfOtherOwner struct {
	Table string          // "workloads", "revisions" or "pods"
	IDs   map[string]bool // the ids refused
}

func (e *RowsOfOtherOwner) Error() string {
	return fmt.Sprintf("%d %s of another cluster", len(e.IDs), e.Table)
}

// markedPod is a pod row as a batch writes it: the pod and the batch's
// mark in one upsert. sync_mark is indexed, so setting it by a second
// UPDATE would write every row of the batch again, in every index of the
// pods table; only the pods named but unchanged get that UPDATE.
type markedPod struct {
	models.Pod
	SyncMark int64
}

func (markedPod) TableName() string { return "pods" }

// WriteCluster writes w. A workload or pod whose stored row is another
// cluster's or tenant's is not replaced, and a revision of another
// workload not taken: the write answers *RowsOfOtherOwner naming them,
// and the caller rolls the transaction back.
func (s *Store) WriteCluster(tx *Txn, w ClusterWrites) error {
	db := tx.db
	if err := upsertAll(db, w.Projects, nil); err != nil {
		return err
	}
	workloadIDs := make([]string, len(w.Workloads))
	for i, wl := range w.Workloads {
		workloadIDs[i] = wl.ID
	}
	if err := upsertOwned(db, "workloads", w.Workloads, workloadIDs, w.TenantID, w.ClusterID); err != nil {
		return err
	}
	if err := createRevisions(db, w.Revisions); err != nil {
		return err
	}
	pods := make([]markedPod, len(w.Pods))
	podIDs := make([]string, len(w.Pods))
	written := make(map[string]bool, len(w.Pods))
	for i, p := range w.Pods {
		pods[i] = markedPod{Pod: p, SyncMark: w.Mark}
		podIDs[i] = p.ID
		written[p.ID] = true
	}
	if err := upsertOwned(db, "pods", pods, podIDs, w.TenantID, w.ClusterID); err != nil {
		return err
	}
	unchanged := make([]string, 0, len(w.Seen))
	for _, id := range w.Seen {
		if !written[id] {
			unchanged = append(unchanged, id)
		}
	}
	for chunk := range slices.Chunk(unchanged, dataSetBatch) {
		if err := db.Exec("UPDATE pods SET sync_mark = ? WHERE tenant_id = ? AND cluster_id = ? AND id IN ?",
			w.Mark, w.TenantID, w.ClusterID, chunk).Error; err != nil {
			return err
		}
	}
	return nil
}

// upsertOwned inserts rows of table (workloads or pods: a tenant_id and a
// cluster_id column), ids their ids in order, replacing a stored row of
// the same id only where it is the same tenant's and cluster's: the
// condition is the upsert's own, so a row another transaction committed
// after this one read is kept, never overwritten. A row not written is
// one of another owner: RowsOfOtherOwner names them.
func upsertOwned[T any](db *gorm.DB, table string, rows []T, ids []string, tenantID int, clusterID string) error {
	if len(rows) == 0 {
		return nil
	}
	owned := clause.Expr{SQL: "? = excluded.tenant_id AND ? = excluded.cluster_id",
		Vars: []any{clause.Column{Table: table, Name: "tenant_id"}, clause.Column{Table: table, Name: "cluster_id"}}}
	res := db.Clauses(clause.OnConflict{UpdateAll: true, Where: clause.Where{Exprs: []clause.Expression{owned}}}).
		CreateInBatches(rows, dataSetBatch)
	if res.Error != nil || res.RowsAffected == int64(len(rows)) {
		return res.Error
	}
	taken := &RowsOfOtherOwner{Table: table, IDs: map[string]bool{}}
	for chunk := range slices.Chunk(ids, dataSetBatch) {
		var got []string
		err := db.Table(table).Where("id IN ? AND NOT (tenant_id = ? AND cluster_id = ?)", chunk, tenantID, clusterID).Pluck("id", &got).Error
		if err != nil {
			return err
		}
		for _, id := range got {
			taken.IDs[id] = true
		}
	}
	if len(taken.IDs) == 0 {
		return fmt.Errorf("store: %d of %d %s written, none of another owner", res.RowsAffected, len(rows), table)
	}
	return taken
}

// createRevisions inserts the revisions not stored yet. One stored with
// another workload (another transaction's, committed after this one read)
// is kept: RowsOfOtherOwner names it.
func createRevisions(db *gorm.DB, revs []models.Revision) error {
	if len(revs) == 0 {
		return nil
	}
	res := db.Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(revs, dataSetBatch)
	if res.Error != nil || res.RowsAffected == int64(len(revs)) {
		return res.Error
	}
	want := make(map[string]string, len(revs))
	ids := make([]string, len(revs))
	for i, r := range revs {
		want[r.ID], ids[i] = r.WorkloadID, r.ID
	}
	taken := &RowsOfOtherOwner{Table: "revisions", IDs: map[string]bool{}}
	for chunk := range slices.Chunk(ids, dataSetBatch) {
		var rows []models.Revision
		if err := db.Where("id IN ?", chunk).Find(&rows).Error; err != nil {
			return err
		}
		for _, r := range rows {
			if r.WorkloadID != want[r.ID] {
				taken.IDs[r.ID] = true
			}
		}
	}
	if len(taken.IDs) == 0 {
		return nil // stored already for the same workload
	}
	return taken
}

// MarkPodsDeleted marks the given live pods of the tenant's cluster
// deleted at now; it answers how many it marked.
func (s *Store) MarkPodsDeleted(tx *Txn, tenantID int, clusterID string, ids []string, now time.Time) (int64, error) {
	var n int64
	for chunk := range slices.Chunk(ids, dataSetBatch) {
		res := tx.db.Exec(`UPDATE pods SET deleted_at = ?, updated_at = ? WHERE tenant_id = ? AND cluster_id = ?
			AND deleted_at IS NULL AND id IN ?`, now, now, tenantID, clusterID, chunk)
		if res.Error != nil {
			return n, res.Error
		}
		n += res.RowsAffected
	}
	return n, nil
}

// MarkUnseenPodsDeleted ends a snapshot: the tenant's cluster's live pods
// no batch named since mark (sync_mark below it) are marked deleted at now.
func (s *Store) MarkUnseenPodsDeleted(tx *Txn, tenantID int, clusterID string, mark int64, now time.Time) (int64, error) {
	res := tx.db.Exec(`UPDATE pods SET deleted_at = ?, updated_at = ? WHERE tenant_id = ? AND cluster_id = ?
		AND deleted_at IS NULL AND sync_mark < ?`, now, now, tenantID, clusterID, mark)
	return res.RowsAffected, res.Error
}

// WorkloadsByIDs reads the tenant's workloads with these ids.
func (s *Store) WorkloadsByIDs(ctx context.Context, tenantID int, ids []string) ([]*models.Workload, error) {
	cond, arg := s.in("id", ids)
	return workloads.read(ctx, s, nil, nil, cond+` AND tenant_id = ?`, arg, tenantID)
}

// ProjectsByIDs reads the tenant's projects with these ids.
func (s *Store) ProjectsByIDs(ctx context.Context, tenantID int, ids []string) ([]*models.Project, error) {
	cond, arg := s.in("id", ids)
	return projects.read(ctx, s, nil, nil, `tenant_id = ? AND `+cond, tenantID, arg)
}

// ProjectsOfTenant lists the tenant's projects by name.
func (s *Store) ProjectsOfTenant(ctx context.Context, tenantID int) ([]*models.Project, error) {
	out := []*models.Project{}
	return out, s.WithContext(ctx).Where("tenant_id = ?", tenantID).Order("name, id").Find(&out).Error
}

// WorkloadsOfTenant lists the tenant's workloads by name, of one project
// when projectID is not "", limit of them from offset.
func (s *Store) WorkloadsOfTenant(ctx context.Context, tenantID int, projectID string, offset, limit int) ([]*models.Workload, error) {
	q := s.WithContext(ctx).Where("tenant_id = ?", tenantID)
	if projectID != "" {
		q = q.Where("project_id = ?", projectID)
	}
	out := []*models.Workload{}
	return out, q.Order("name, id").Offset(offset).Limit(limit).Find(&out).Error
}
