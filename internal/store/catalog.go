package store

import (
	"context"

	"gorm.io/gorm"

	"gpugraph/internal/lib/filterby"
	"gpugraph/models"
)

// The catalogs a console fills its filter menus from, and the keyset pages
// of the big lists. Like every read here, a tenant's rows are read only for
// that tenant and an organization's only for that organization.

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

// GPUModels lists the catalog by name.
func (s *Store) GPUModels(ctx context.Context) ([]*models.GPUModel, error) {
	out := []*models.GPUModel{}
	return out, s.WithContext(ctx).Order("name, id").Find(&out).Error
}

// NodePage lists nodes by name, limit of them from offset, with how many
// match in all.
func (s *Store) NodePage(ctx context.Context, statuses []models.NodeStatus, offset, limit int) ([]*models.Node, int64, error) {
	q := s.nodeScope(ctx, statuses)
	var total int64
	if err := q.Count(&total).Error; err != nil {
		return nil, 0, err
	}
	out := []*models.Node{}
	return out, total, q.Order("name, id").Offset(offset).Limit(limit).Find(&out).Error
}

func (s *Store) nodeScope(ctx context.Context, statuses []models.NodeStatus) *gorm.DB {
	q := s.WithContext(ctx).Model(&models.Node{})
	if len(statuses) > 0 {
		q = q.Where("status IN ?", statuses)
	}
	return q
}

// NodeSort is the nodes' keyset order: by name.
var NodeSort = []SortKey{{Column: "name"}}

// NodesAfter lists nodes by name after a (nil: from the first), at most
// limit, and whether more follow; total counts every match when count.
func (s *Store) NodesAfter(ctx context.Context, statuses []models.NodeStatus, a *After, limit int, count bool) ([]*models.Node, bool, int64, error) {
	out := []*models.Node{}
	return keysetPage(s.nodeScope(ctx, statuses), NodeSort, a, limit, count, &out)
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

// VMSort is the VMs' keyset order, the order of VMPage: newest first,
// rows without a creation time last.
var VMSort = []SortKey{{Column: "created_at", Desc: true}}

// VMsAfter lists the organization's VMs as VMPage does, after a (nil: from
// the first), at most limit, and whether more follow; total counts every
// match when count.
func (s *Store) VMsAfter(ctx context.Context, orgID string, statuses []models.VMStatus, a *After, limit int, count bool) ([]*models.VM, bool, int64, error) {
	db := s.WithContext(ctx).Model(&models.VM{}).Where("organization_id = ? AND deleted_at IS NULL", orgID)
	if len(statuses) > 0 {
		db = db.Where("status IN ?", statuses)
	}
	out := []*models.VM{}
	return keysetPage(db, VMSort, a, limit, count, &out)
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

// keysetPage reads limit rows of db after a in the order keys, one more to
// know whether more follow, and counts db's rows first when count.
func keysetPage[T any](db *gorm.DB, keys []SortKey, a *After, limit int, count bool, out *[]*T) ([]*T, bool, int64, error) {
	var total int64
	if count {
		if err := db.Session(&gorm.Session{}).Count(&total).Error; err != nil {
			return nil, false, 0, err
		}
	}
	if a != nil {
		cond, args := keysetSQL(keys, *a)
		db = db.Where(cond, args...)
	}
	if err := db.Order(keysetOrder(keys)).Limit(limit + 1).Find(out).Error; err != nil {
		return nil, false, 0, err
	}
	rows := *out
	more := len(rows) > limit
	if more {
		rows = rows[:limit]
	}
	return rows, more, total, nil
}
