package store

import (
	"context"
	"errors"

	"gorm.io/gorm"

	"gpugraph/internal/lib/filterby"
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
func (s *Store) PodPage(ctx context.Context, q PodQuery, offset, limit int) ([]*models.Pod, bool, error) {
	var out []*models.Pod
	db := s.podScope(ctx, q)
	if len(q.Columns) > 0 {
		db = db.Select(q.Columns)
	}
	err := db.Order(s.podOrder(q)).Offset(offset).Limit(limit + 1).Find(&out).Error
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

// CountPods answers how many pods q matches.
func (s *Store) CountPods(ctx context.Context, q PodQuery) (int64, error) {
	var n int64
	return n, s.podScope(ctx, q).Count(&n).Error
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
