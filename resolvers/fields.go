package resolvers

import (
	"context"

	"gpugraph/graph/model"
	"gpugraph/internal/auth"
	"gpugraph/internal/fieldmodel"
	"gpugraph/internal/httpapi/loaders"
	"gpugraph/internal/lib/paging"
	"gpugraph/internal/services/compute"
	"gpugraph/models"
)

// VM reads through the request's loaders, which are scoped to the
// caller's organization; package compute says who may read VMs.
func (r *queryResolver) VM(ctx context.Context, id string) (*models.VM, error) {
	if err := r.may(ctx, r.Services.Compute.MayRead); err != nil {
		return nil, err
	}
	return loaders.For(ctx).VMByID.Load(ctx, id)()
}

func (r *queryResolver) Vms(ctx context.Context, status []models.VMStatus, offset, limit *int) (*model.VMList, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return nil, err
	}
	// Asked before the page is read, so that a refusal answers before a
	// bad offset or limit does.
	if err := r.Services.Compute.MayRead(c); err != nil {
		return nil, err
	}
	page, err := paging.Parse(offset, limit)
	if err != nil {
		return nil, err
	}
	vms, total, err := r.Services.Compute.List(ctx, c, compute.ListQuery{Statuses: status, Page: page, Count: fieldmodel.Selects(ctx, "total"), Columns: loaders.For(ctx).Narrowed().VMs})
	if err != nil {
		return nil, err
	}
	for _, v := range vms {
		loaders.For(ctx).VMByID.Prime(ctx, v.ID, v)
	}
	if err := fieldmodel.Prefetch(ctx, vms); err != nil {
		return nil, err
	}
	return &model.VMList{Vms: vms, Next: page.Next(total), Total: int(total)}, nil
}

// Node reads through the request's loaders; package inventory says who may
// read nodes.
func (r *queryResolver) Node(ctx context.Context, id string) (*models.Node, error) {
	if err := r.may(ctx, r.Services.Hardware.MayRead); err != nil {
		return nil, err
	}
	return loaders.For(ctx).NodeByID.Load(ctx, id)()
}

func (r *queryResolver) Nodes(ctx context.Context, status []models.NodeStatus) ([]*models.Node, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return nil, err
	}
	nodes, err := r.Services.Hardware.AllNodes(ctx, c, status)
	if err != nil {
		return nil, err
	}
	if err := fieldmodel.Prefetch(ctx, nodes); err != nil {
		return nil, err
	}
	return nodes, nil
}

// The nested fields below derive their value from what a declared field
// of package fieldmodel loads (fieldmodel.Resolve); the Plain ones are
// generated (graph.VMLoads, …).

var (
	vmGPUIDs          = fieldmodel.Declared.Field("VM", "gpuIds")
	vmGPUManufacturer = fieldmodel.Declared.Field("VM", "gpuManufacturer")
	vmGPUModelName    = fieldmodel.Declared.Field("VM", "gpuModelName")
	nodeFreeGPUCount  = fieldmodel.Declared.Field("Node", "freeGpuCount")
)

func (r *nodeResolver) FreeGPUCount(ctx context.Context, n *models.Node) (int, error) {
	gpus, err := fieldmodel.Resolve[[]*models.GPU](ctx, nodeFreeGPUCount, n)
	if err != nil {
		return 0, err
	}
	free := 0
	for _, g := range gpus {
		if g.Health == models.GPUHealthy && g.HolderVMID == nil {
			free++
		}
	}
	return free, nil
}

func (r *gpuResolver) MemoryUsedBytes(ctx context.Context, g *models.GPU) (*float64, error) {
	if g.MemoryUsedBytes == nil {
		return nil, nil
	}
	f := float64(*g.MemoryUsedBytes)
	return &f, nil
}

func (r *vmResolver) GPUIds(ctx context.Context, v *models.VM) ([]string, error) {
	gpus, err := fieldmodel.Resolve[[]*models.GPU](ctx, vmGPUIDs, v)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(gpus))
	for i, g := range gpus {
		ids[i] = g.ID
	}
	return ids, nil
}

func (r *vmResolver) GPUManufacturer(ctx context.Context, v *models.VM) (*models.Manufacturer, error) {
	m, err := fieldmodel.Resolve[*models.GPUModel](ctx, vmGPUManufacturer, v)
	if m == nil || err != nil {
		return nil, err
	}
	return &m.Manufacturer, nil
}

func (r *vmResolver) GPUModelName(ctx context.Context, v *models.VM) (*string, error) {
	m, err := fieldmodel.Resolve[*models.GPUModel](ctx, vmGPUModelName, v)
	if m == nil || err != nil {
		return nil, err
	}
	return &m.Name, nil
}
