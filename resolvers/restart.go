package resolvers

import (
	"context"

	"gpugraph/auth"
	"gpugraph/compute"
	"gpugraph/loaders"
	"gpugraph/models"
)

// RestartVM is restartVm (SPEC §5) for both faces: the REST shim calls it
// too. It checks the permission, lets package compute decide and claim, and
// hands the request's loaders what the restart already read, so the answer's
// gpuIds, gpuModelName and gpuManufacturer cost no further query.
func (r *mutationResolver) RestartVM(ctx context.Context, id string) (*models.VM, error) {
	c, err := auth.Require(ctx, auth.ComputeOperate)
	if err != nil {
		return nil, err
	}
	res, err := compute.Restart(ctx, r.Store, c.OrganizationID, id)
	if err != nil {
		return nil, err
	}
	if l := loaders.For(ctx); l != nil {
		l.VMByID.Clear(ctx, id).Prime(ctx, id, res.VM)
		l.GPUsByVM.Clear(ctx, id).Prime(ctx, id, res.GPUs)
		if res.Model != nil {
			l.ModelByID.Prime(ctx, res.Model.ID, res.Model)
		}
	}
	return res.VM, nil
}
