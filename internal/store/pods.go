package store

import (
	"context"
	"errors"

	"gorm.io/gorm"

	"gpugraph/internal/lib/filterby"
	"gpugraph/internal/lib/podfield"
	"gpugraph/models"
)

// PodQuery picks Run:ai pods of one tenant. Every list and count of pods
// goes through it, so none can forget the tenant.
type PodQuery struct {
	TenantID   int
	WorkloadID string // "" for every workload
	RevisionID string // "" for every revision
	Deleted    bool   // false: pods not deleted; true: only deleted ones
	Completed  *bool  // nil: both; true: only completed; false: only not completed
	Search     string // case-insensitive substring of name, nodeName, workloadName, projectName; "" for none
	// Filters narrows further: the parsed filterBy parameters, ANDed.
	Filters []filterby.Filter
	// Sort is the order of a list; the zero Sort is createdAt, id.
	Sort filterby.Sort
	// Columns are the only columns a page reads (nil: every column): a
	// GraphQL query reads what it selects, not every JSON column.
	Columns []string
}

// podScope is q's WHERE clause on the pods table.
func (s *Store) podScope(ctx context.Context, q PodQuery) *gorm.DB {
	db := s.WithContext(ctx).Model(&models.Pod{}).
		Where("tenant_id = ? AND is_deleted = ?", q.TenantID, q.Deleted)
	if q.WorkloadID != "" {
		db = db.Where("workload_id = ?", q.WorkloadID)
	}
	if q.RevisionID != "" {
		db = db.Where("revision_id = ?", q.RevisionID)
	}
	if q.Completed != nil {
		if *q.Completed {
			db = db.Where("completed_at IS NOT NULL")
		} else {
			db = db.Where("completed_at IS NULL")
		}
	}
	if q.Search != "" {
		if models.SearchableText(q.Search) {
			db = db.Where(`search_text LIKE ? ESCAPE '\'`, "%"+escapeLike(models.FoldCase(q.Search))+"%")
		} else {
			db = db.Where("1 = 0")
		}
	}
	if sql, args := filtersSQL(q.Filters); sql != "" {
		db = db.Where(sql, args...)
	}
	return db
}

// PodPage answers the pods of q from offset on, at most limit of them, in
// q's order, and whether more follow. It reads limit+1 rows to know that,
// so a page costs one statement and needs no count.
//
// A page of scalar columns only (a GraphQL query's, which selects what it
// reads) is scanned column by column into its fields, on PostgreSQL through
// pgx itself (readRows), without gorm's reflection over every field of every
// row; a page of every column (REST's) or of a JSON column goes through gorm,
// whose serializers decode those.
func (s *Store) PodPage(ctx context.Context, q PodQuery, offset, limit int) ([]*models.Pod, bool, error) {
	var out []*models.Pod
	db := s.podScope(ctx, q)
	if len(q.Columns) > 0 {
		db = db.Select(q.Columns)
	}
	db = db.Order(s.podOrder(q)).Offset(offset).Limit(limit + 1)
	var err error
	if into, ok := podScalars.fields(q.Columns); ok {
		out, err = podScalars.readQuery(ctx, s, db, into)
	} else {
		err = db.Find(&out).Error
	}
	if err != nil {
		return nil, false, err
	}
	more := len(out) > limit
	if more {
		out = out[:limit]
	}
	return out, more, nil
}

// Pods answers every pod of q in q's order; for lists that are small by
// nature (one revision's pods).
func (s *Store) Pods(ctx context.Context, q PodQuery) ([]*models.Pod, error) {
	out := []*models.Pod{}
	return out, s.podScope(ctx, q).Order(s.podOrder(q)).Find(&out).Error
}

// CountPods answers how many pods q matches, in one statement. A count
// that only the tenant, deleted or not, and at most one k8sPhase==X narrow
// sums the kept counts (migration 0026_pod_counts), written in the same
// transaction as every pod write, instead of counting the pods themselves.
func (s *Store) CountPods(ctx context.Context, q PodQuery) (int64, error) {
	var n int64
	if phase, ok := keptCount(q); ok {
		db := s.WithContext(ctx).Table("pod_counts").Where("tenant_id = ? AND is_deleted = ?", q.TenantID, q.Deleted)
		if phase != nil {
			db = db.Where("k8s_phase = ?", *phase)
		}
		return n, db.Select("COALESCE(SUM(n), 0)").Find(&n).Error
	}
	return n, s.podScope(ctx, q).Count(&n).Error
}

// keptCount reports whether pod_counts answers q's count: q narrows by
// nothing but its tenant, deleted or not, and at most one k8sPhase==X
// (phase, nil for every phase).
func keptCount(q PodQuery) (phase *string, ok bool) {
	if q.WorkloadID != "" || q.RevisionID != "" || q.Completed != nil || q.Search != "" || len(q.Filters) > 1 {
		return nil, false
	}
	if len(q.Filters) == 0 {
		return nil, true
	}
	f := q.Filters[0]
	if fd, known := podfield.ByParam(f.Field); !known || fd.Column != "k8s_phase" || f.Op != filterby.Eq || f.IsTime {
		return nil, false
	}
	return &f.Value, true
}

// CompactPodCounts folds each key's rows of the kept pod counts into one
// (dropping keys that sum to 0), in one statement: on PostgreSQL every pod
// write appends rows, so a count sums more of them the longer they are left.
// Two replicas compacting at once are safe: a row is folded by the one
// whose DELETE removed it, and the other, finding it gone once the first
// commits, neither returns nor re-adds it. On SQLite, where each key has
// one row, it does nothing.
func (s *Store) CompactPodCounts(ctx context.Context) error {
	if s.Dialect != Postgres {
		return nil
	}
	return s.WithContext(ctx).Exec(`WITH gone AS (
		DELETE FROM pod_counts WHERE (tenant_id, is_deleted, k8s_phase) IN (
			SELECT tenant_id, is_deleted, k8s_phase FROM pod_counts GROUP BY tenant_id, is_deleted, k8s_phase HAVING count(*) > 1 OR sum(n) = 0)
		RETURNING tenant_id, is_deleted, k8s_phase, n)
	INSERT INTO pod_counts (tenant_id, is_deleted, k8s_phase, n)
		SELECT tenant_id, is_deleted, k8s_phase, sum(n) FROM gone GROUP BY tenant_id, is_deleted, k8s_phase HAVING sum(n) <> 0`).Error
}

func (s *Store) podOrder(q PodQuery) string {
	return orderSQL(q.Sort, s.Dialect == Postgres)
}

// TenantHasWorkload reports whether workload id exists and belongs to a
// project of the tenant (the workload's tenant_id is its project's);
// another tenant's workload does not exist for it.
func (s *Store) TenantHasWorkload(ctx context.Context, tenantID int, id string) (bool, error) {
	return s.exists(ctx, `SELECT 1 FROM workloads WHERE id = ? AND tenant_id = ?`, id, tenantID)
}

// TenantHasRevision reports whether revision id exists and belongs to a
// workload of the tenant.
func (s *Store) TenantHasRevision(ctx context.Context, tenantID int, id string) (bool, error) {
	return s.exists(ctx, `SELECT 1 FROM revisions r JOIN workloads w ON w.id = r.workload_id
		WHERE r.id = ? AND w.tenant_id = ?`, id, tenantID)
}

func (s *Store) exists(ctx context.Context, sql string, args ...any) (bool, error) {
	var one int
	err := s.WithContext(ctx).Raw(sql, args...).Take(&one).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return false, nil
	}
	return err == nil, err
}

// PodsAfter lists the pods of q in q's order after a (nil: from the
// first), at most limit, and whether more follow; total counts every match
// when count. a's one value is that of q's sort column.
func (s *Store) PodsAfter(ctx context.Context, q PodQuery, a *After, limit int, count bool) ([]*models.Pod, bool, int64, error) {
	db := s.podScope(ctx, q)
	var total int64
	if count {
		if err := db.Session(&gorm.Session{}).Count(&total).Error; err != nil {
			return nil, false, 0, err
		}
	}
	if a != nil {
		fd := q.Sort.PodField()
		cond, args := keysetSQL([]SortKey{{Column: fd.Column, Desc: q.Sort.Order == filterby.Desc, NullsFirst: q.Sort.Order == filterby.Desc}}, *a)
		db = db.Where(cond, args...)
	}
	if len(q.Columns) > 0 {
		db = db.Select(q.Columns)
	}
	out := []*models.Pod{}
	if err := db.Order(s.podOrder(q)).Limit(limit + 1).Find(&out).Error; err != nil {
		return nil, false, 0, err
	}
	more := len(out) > limit
	if more {
		out = out[:limit]
	}
	return out, more, total, nil
}

// TenantPodRow reads a pod of the tenant under the workload, or nil when
// there is none (missing, under another workload, or another tenant's).
// A remote metrics source matches the pod by its name, project, cluster
// and node.
func (s *Store) TenantPodRow(ctx context.Context, tenantID int, workloadID, podID string) (*models.Pod, error) {
	var p models.Pod
	err := s.WithContext(ctx).Where("id = ? AND workload_id = ? AND tenant_id = ?", podID, workloadID, tenantID).Take(&p).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// podScalars are the pods table's columns that scan into a field as they
// are (its JSON columns are gorm's to decode).
var podScalars = &table[models.Pod]{name: "pods", columns: []column[models.Pod]{
	{"id", func(p *models.Pod) any { return &p.ID }},
	{"name", func(p *models.Pod) any { return &p.Name }},
	{"priority_class_name", func(p *models.Pod) any { return &p.PriorityClassName }},
	{"workload_id", func(p *models.Pod) any { return &p.WorkloadID }},
	{"revision_id", func(p *models.Pod) any { return &p.RevisionID }},
	{"cluster_id", func(p *models.Pod) any { return &p.ClusterID }},
	{"project_id", func(p *models.Pod) any { return &p.ProjectID }},
	{"node_name", func(p *models.Pod) any { return &p.NodeName }},
	{"created_at", func(p *models.Pod) any { return &p.CreatedAt }},
	{"completed_at", func(p *models.Pod) any { return &p.CompletedAt }},
	{"current_node_pool", func(p *models.Pod) any { return &p.CurrentNodePool }},
	{"k8s_phase", func(p *models.Pod) any { return &p.K8sPhase }},
	{"ip", func(p *models.Pod) any { return &p.IP }},
	{"task", func(p *models.Pod) any { return &p.Task }},
	{"tenant_id", func(p *models.Pod) any { return &p.TenantID }},
	{"k8s_phase_updated_at", func(p *models.Pod) any { return &p.K8sPhaseUpdatedAt }},
	{"updated_at", func(p *models.Pod) any { return &p.UpdatedAt }},
	{"deleted_at", func(p *models.Pod) any { return &p.DeletedAt }},
	{"project_name", func(p *models.Pod) any { return &p.ProjectName }},
	{"workload_name", func(p *models.Pod) any { return &p.WorkloadName }},
}}
