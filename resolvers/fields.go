package resolvers

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"gpugraph/auth"
	"gpugraph/compute"
	"gpugraph/graph/model"
	"gpugraph/loaders"
	"gpugraph/models"
	"gpugraph/paging"
	"gpugraph/resolvers/prefetch"
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
	vms, total, err := r.Services.Compute.List(ctx, c, compute.ListQuery{Statuses: status, Page: page, Count: selects(ctx, "total"), Columns: loaders.For(ctx).Narrowed().VMs})
	if err != nil {
		return nil, err
	}
	for _, v := range vms {
		loaders.For(ctx).VMByID.Prime(ctx, v.ID, v)
	}
	if err := prefetchBelow(ctx, vms); err != nil {
		return nil, err
	}
	return &model.VMList{Vms: vms, Next: page.Next(total), Total: int(total)}, nil
}

// Node reads through the request's loaders; package hardware says who may
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
	if err := prefetchBelow(ctx, nodes); err != nil {
		return nil, err
	}
	return nodes, nil
}

func (r *nodeResolver) Gpus(ctx context.Context, n *models.Node) ([]*models.GPU, error) {
	gpus, err := loaders.For(ctx).GPUsByNode.Load(ctx, n.ID)()
	if err != nil {
		return nil, err
	}
	return gpus, fillModels(ctx, gpus)
}

// fillModels sets the GPUs' Model when the field being resolved selects
// Gpu.model of them (as a list, or through a connection's nodes or
// edges.node), which answers it as a plain field.
func fillModels(ctx context.Context, gpus []*models.GPU) error {
	if len(gpus) == 0 || !selectsModel(ctx) {
		return nil
	}
	return loaders.For(ctx).FillGPUModels(ctx, gpus)
}

// selectsModel reports whether the field being resolved selects Gpu.model
// of the GPUs it answers, found as prefetch finds a selection.
func selectsModel(ctx context.Context) bool {
	sel, ok := prefetch.Selection(ctx, "Gpu")
	if !ok {
		return false
	}
	for _, f := range graphql.CollectFields(graphql.GetOperationContext(ctx), sel, []string{"Gpu"}) {
		if f.Name == "model" {
			return true
		}
	}
	return false
}

func (r *nodeResolver) Vms(ctx context.Context, n *models.Node) ([]*models.VM, error) {
	return loaders.For(ctx).VMsByNode.Load(ctx, n.ID)()
}

// VM is the holder, when it is the caller's organization's; a GPU another
// organization holds simply shows no holder.
func (r *gpuResolver) VM(ctx context.Context, g *models.GPU) (*models.VM, error) {
	if g.HolderVMID == nil {
		return nil, nil
	}
	return loaders.For(ctx).VMByID.Load(ctx, *g.HolderVMID)()
}

func (r *gpuResolver) Node(ctx context.Context, g *models.GPU) (*models.Node, error) {
	return loaders.For(ctx).NodeByID.Load(ctx, g.NodeID)()
}

func (r *gpuResolver) MemoryUsedBytes(ctx context.Context, g *models.GPU) (*float64, error) {
	if g.MemoryUsedBytes == nil {
		return nil, nil
	}
	f := float64(*g.MemoryUsedBytes)
	return &f, nil
}

func (r *vmResolver) GPUIds(ctx context.Context, v *models.VM) ([]string, error) {
	gpus, err := loaders.For(ctx).GPUsByVM.Load(ctx, v.ID)()
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(gpus))
	for i, g := range gpus {
		ids[i] = g.ID
	}
	return ids, nil
}

func (r *vmResolver) Gpus(ctx context.Context, v *models.VM) ([]*models.GPU, error) {
	gpus, err := loaders.For(ctx).GPUsByVM.Load(ctx, v.ID)()
	if err != nil {
		return nil, err
	}
	return gpus, fillModels(ctx, gpus)
}

func (r *vmResolver) Node(ctx context.Context, v *models.VM) (*models.Node, error) {
	if v.NodeID == nil {
		return nil, nil
	}
	return loaders.For(ctx).NodeByID.Load(ctx, *v.NodeID)()
}

func (r *vmResolver) GPUModel(ctx context.Context, v *models.VM) (*models.GPUModel, error) {
	if v.GPUModelID == nil {
		return nil, nil
	}
	return loaders.For(ctx).ModelByID.Load(ctx, *v.GPUModelID)()
}

func (r *vmResolver) GPUManufacturer(ctx context.Context, v *models.VM) (*models.Manufacturer, error) {
	m, err := r.GPUModel(ctx, v)
	if m == nil || err != nil {
		return nil, err
	}
	return &m.Manufacturer, nil
}

func (r *vmResolver) GPUModelName(ctx context.Context, v *models.VM) (*string, error) {
	m, err := r.GPUModel(ctx, v)
	if m == nil || err != nil {
		return nil, err
	}
	return &m.Name, nil
}

func (r *podResolver) Node(ctx context.Context, p *models.Pod) (*models.Node, error) {
	if p.NodeName == nil {
		return nil, nil
	}
	return loaders.For(ctx).NodeByName.Load(ctx, podNodeKey(p))()
}

func (r *podResolver) Workload(ctx context.Context, p *models.Pod) (*models.Workload, error) {
	return loaders.For(ctx).WorkloadByID.Load(ctx, p.WorkloadID)()
}

func (r *podResolver) Project(ctx context.Context, p *models.Pod) (*models.Project, error) {
	if p.ProjectID == nil {
		return nil, nil
	}
	return loaders.For(ctx).ProjectByID.Load(ctx, *p.ProjectID)()
}

func (r *workloadResolver) Project(ctx context.Context, w *models.Workload) (*models.Project, error) {
	return loaders.For(ctx).ProjectByID.Load(ctx, w.ProjectID)()
}
