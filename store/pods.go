package store

import (
	"context"
	"errors"
	"strings"

	"gorm.io/gorm"

	"gpugraph/models"
)

// PodQuery picks Run:ai pods of one tenant (SPEC §6). Every list and count
// of pods goes through it, so none can forget the tenant.
type PodQuery struct {
	TenantID   int
	WorkloadID string // "" for every workload
	RevisionID string // "" for every revision
	Deleted    bool   // false: pods not deleted; true: only deleted ones
	Completed  *bool  // nil: both; true: only completed; false: only not completed
	Search     string // case-insensitive substring of name, nodeName, workloadName, projectName; "" for none
	// Filters narrows further; it is filterby.Scope of the filterBy
	// parameters (store cannot import filterby, whose tests use the store).
	Filters func(*gorm.DB) *gorm.DB
	// Order is the order of a list, a filterby.Sort; nil is createdAt, id.
	Order PodOrder
	// Columns are the only columns a page reads (nil: every column): a
	// GraphQL query reads what it selects, not every JSON column.
	Columns []string
}

// PodOrder is a pods order as package filterby writes it. Both lists end on
// id, so pages never repeat or skip a pod.
type PodOrder interface {
	// OrderBy is the ORDER BY list for any engine, nulls placed explicitly.
	OrderBy() string
	// PostgresOrderBy is the same order relying on PostgreSQL's own null
	// placement, which its list indexes (0005_pods_indexes) are built for.
	PostgresOrderBy() string
}

// defaultPodOrder is filterby's default order (createdAt ascending), the
// same on both engines: created_at is NOT NULL.
const defaultPodOrder = "created_at, id"

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
	if q.Filters != nil {
		db = db.Scopes(q.Filters)
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
	switch {
	case q.Order == nil:
		return defaultPodOrder
	case s.Dialect == Postgres:
		return q.Order.PostgresOrderBy()
	}
	return q.Order.OrderBy()
}

// TenantHasWorkload reports whether workload id exists and belongs to a
// project of the tenant; another tenant's workload does not exist for it.
func (s *Store) TenantHasWorkload(ctx context.Context, tenantID int, id string) (bool, error) {
	return s.exists(ctx, `SELECT 1 FROM workloads w JOIN projects p ON p.id = w.project_id
		WHERE w.id = ? AND p.tenant_id = ?`, id, tenantID)
}

// TenantHasRevision reports whether revision id exists and belongs to a
// workload of the tenant.
func (s *Store) TenantHasRevision(ctx context.Context, tenantID int, id string) (bool, error) {
	return s.exists(ctx, `SELECT 1 FROM revisions r JOIN workloads w ON w.id = r.workload_id
		JOIN projects p ON p.id = w.project_id WHERE r.id = ? AND p.tenant_id = ?`, id, tenantID)
}

func (s *Store) exists(ctx context.Context, sql string, args ...any) (bool, error) {
	var one int
	err := s.WithContext(ctx).Raw(sql, args...).Take(&one).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return false, nil
	}
	return err == nil, err
}

var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// escapeLike makes every character of v match itself in a LIKE pattern
// with ESCAPE '\' (as package filterby does for filterBy values).
func escapeLike(v string) string { return likeEscaper.Replace(v) }
