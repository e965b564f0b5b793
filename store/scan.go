package store

import (
	"context"
	"database/sql"

	"gpugraph/models"
)

// The loaders' batch reads answer thousands of rows a request (500 pods'
// nodes, their GPUs, workloads): scanned by gorm, reflection over every
// column of every row cost more CPU than the statements themselves. These
// reads name their columns and scan each row into its fields directly;
// each column list and its scan are side by side, in the same order.

// rowsOf runs query and makes one *T per row with scan.
func rowsOf[T any](ctx context.Context, s *Store, scan func(*sql.Rows, *T) error, query string, args ...any) ([]*T, error) {
	rows, err := s.WithContext(ctx).Raw(query, args...).Rows()
	return scanned(rows, err, scan)
}

const nodeColumns = `id, name, cluster_id, node_pool, status, agent_version, fabric_id, cpu_cores, ram_gb, disk_gb, leaving_at, last_heartbeat_at`

func scanNode(r *sql.Rows, n *models.Node) error {
	return r.Scan(&n.ID, &n.Name, &n.ClusterID, &n.NodePool, &n.Status, &n.AgentVersion, &n.FabricID, &n.CPUCores, &n.RAMGb, &n.DiskGb, &n.LeavingAt, &n.LastHeartbeatAt)
}

const gpuColumns = `id, node_id, idx, uuid, address, model_id, health, failed_reason, holder_vm_id, utilization, memory_used_bytes, sampled_at`

func scanGpu(r *sql.Rows, g *models.Gpu) error {
	return r.Scan(&g.ID, &g.NodeID, &g.Index, &g.UUID, &g.Address, &g.ModelID, &g.Health, &g.FailedReason, &g.HolderVMID, &g.Utilization, &g.MemoryUsedBytes, &g.SampledAt)
}

const gpuModelColumns = `id, name, manufacturer, memory_gb`

func scanGpuModel(r *sql.Rows, m *models.GpuModel) error {
	return r.Scan(&m.ID, &m.Name, &m.Manufacturer, &m.MemoryGb)
}

const workloadColumns = `id, name, project_id, cluster_id`

func scanWorkload(r *sql.Rows, w *models.Workload) error {
	return r.Scan(&w.ID, &w.Name, &w.ProjectID, &w.ClusterID)
}

const projectColumns = `id, name, tenant_id`

func scanProject(r *sql.Rows, p *models.Project) error {
	return r.Scan(&p.ID, &p.Name, &p.TenantID)
}

const vmColumns = `id, name, organization_id, status, status_reason, capability_tier, compute_class, created_at, disk_size_gb,
	endpoint_url, gpu_count, gpu_model_id, image_url, managed_by, price_per_hour_cents, provisioning_stage, public,
	resource_size, service_type, tier, volume_gb, node_id, cpu_cores, ram_gb, tearing_down, interrupted_at, updated_at,
	generation, status_changed_at, deleted_at`

func scanVM(r *sql.Rows, v *models.VM) error {
	var updated sql.NullTime // nullable in the table, a plain time in the row
	err := r.Scan(&v.ID, &v.Name, &v.OrganizationID, &v.Status, &v.StatusReason, &v.CapabilityTier, &v.ComputeClass, &v.CreatedAt, &v.DiskSizeGb,
		&v.EndpointURL, &v.GpuCount, &v.GpuModelID, &v.ImageURL, &v.ManagedBy, &v.PricePerHourCents, &v.ProvisioningStage, &v.Public,
		&v.ResourceSize, &v.ServiceType, &v.Tier, &v.VolumeGb, &v.NodeID, &v.CPUCores, &v.RAMGb, &v.TearingDown, &v.InterruptedAt, &updated,
		&v.Generation, &v.StatusChangedAt, &v.DeletedAt)
	v.UpdatedAt = updated.Time
	return err
}

// scanned makes one *T per row of rows with scan.
func scanned[T any](rows *sql.Rows, err error, scan func(*sql.Rows, *T) error) ([]*T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*T
	for rows.Next() {
		v := new(T)
		if err := scan(rows, v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
