package store

import (
	"context"
	"errors"

	"gorm.io/gorm"

	"gpugraph/models"
)

// The batch reads behind the dataloaders: one statement each, whatever the
// number of keys. Rows come back in no particular order; loaders put them in
// key order. Every read of a VM is scoped to an organization, every read of
// a workload or project to a tenant: there is no unscoped variant to misuse.
// Every read of a VM also skips deleted rows (deleted_at set: a pod
// interrupted for 7 days), which the API no longer shows; the row and its
// events stay for the audit trail.

// NodeByID reads one node; nil when there is none.
func (s *Store) NodeByID(ctx context.Context, id string) (*models.Node, error) {
	var n models.Node
	err := s.WithContext(ctx).Where("id = ?", id).Take(&n).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil
	}
	return &n, err
}

// Nodes lists nodes by name, optionally only those in the given statuses.
func (s *Store) Nodes(ctx context.Context, statuses []models.NodeStatus) ([]*models.Node, error) {
	var out []*models.Node
	return out, s.nodeScope(ctx, statuses).Order("name, id").Find(&out).Error
}

// NodesByIDs reads the nodes with these ids: of their columns, cols (nil:
// all; the id always).
func (s *Store) NodesByIDs(ctx context.Context, ids []string, cols Columns) ([]*models.Node, error) {
	cond, arg := s.in("id", ids)
	return nodes.read(ctx, s, cols, nil, cond, arg)
}

// NodeKey names a node as a pod does: by cluster and name.
type NodeKey struct{ ClusterID, Name string }

// NodesByClusterNames reads the nodes named by these keys. Node names are
// unique across clusters, so it reads by name; the caller matches the
// cluster (a pod naming a node of another cluster finds none).
func (s *Store) NodesByClusterNames(ctx context.Context, keys []NodeKey, cols Columns) ([]*models.Node, error) {
	names := make([]string, 0, len(keys))
	for _, k := range keys {
		names = append(names, k.Name)
	}
	cond, arg := s.in("name", names)
	return nodes.read(ctx, s, cols, []string{"name", "cluster_id"}, cond, arg)
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

// GPUModelsByIDs reads these catalog entries.
func (s *Store) GPUModelsByIDs(ctx context.Context, ids []string) ([]*models.GPUModel, error) {
	cond, arg := s.in("id", ids)
	return gpuModels.read(ctx, s, nil, nil, cond, arg)
}

// VMsByIDs reads the organization's VMs with these ids; others' do not exist.
func (s *Store) VMsByIDs(ctx context.Context, orgID string, ids []string, cols Columns) ([]*models.VM, error) {
	cond, arg := s.in("id", ids)
	return vms.read(ctx, s, cols, nil, `organization_id = ? AND deleted_at IS NULL AND `+cond, orgID, arg)
}

// VMsByNodeIDs reads the organization's VMs on these nodes, oldest first.
func (s *Store) VMsByNodeIDs(ctx context.Context, orgID string, nodeIDs []string, cols Columns) ([]*models.VM, error) {
	cond, arg := s.in("node_id", nodeIDs)
	return vms.read(ctx, s, cols, []string{"node_id"}, `organization_id = ? AND deleted_at IS NULL AND `+cond+` ORDER BY created_at, id`, orgID, arg)
}

// VMPage lists the organization's VMs, newest first, with the total count.
// Without count it runs no count(*): it reads one row past the page
// instead and answers a total that says only whether more follow (offset
// plus the rows read), which is all the page's next offset needs.
func (s *Store) VMPage(ctx context.Context, orgID string, statuses []models.VMStatus, offset, limit int, count bool, cols Columns) ([]*models.VM, int64, error) {
	q := s.WithContext(ctx).Model(&models.VM{}).Where("organization_id = ? AND deleted_at IS NULL", orgID)
	if len(statuses) > 0 {
		q = q.Where("status IN ?", statuses)
	}
	var total int64
	if count {
		if err := q.Count(&total).Error; err != nil {
			return nil, 0, err
		}
	}
	read := limit
	if !count {
		read = limit + 1
	}
	list, into := vms.pick(cols)
	out, err := vms.readQuery(ctx, s, q.Select(list).Order("created_at DESC NULLS LAST, id DESC").Offset(offset).Limit(read), into)
	if err != nil || count {
		return out, total, err
	}
	total = int64(offset + len(out))
	if len(out) > limit {
		out = out[:limit]
	}
	return out, total, nil
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

// Empty reports whether the database holds no organization and no node yet.
func (s *Store) Empty(ctx context.Context) (bool, error) {
	var n int64
	if err := s.WithContext(ctx).Raw("SELECT (SELECT COUNT(*) FROM organizations) + (SELECT COUNT(*) FROM nodes)").Scan(&n).Error; err != nil {
		return false, err
	}
	return n == 0, nil
}
