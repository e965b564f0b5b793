package resolvers

import (
	"context"

	"gpugraph/internal/auth"
	"gpugraph/internal/httpapi/loaders"
	"gpugraph/models"
)

// RestartVM is the mutation restartVm: package compute checks the
// permission, decides and claims; this hands the request's loaders what the
// restart already read, so the answer's gpus and gpuModel cost no further
// query.
func (r *mutationResolver) RestartVM(ctx context.Context, id string) (*models.VM, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return nil, err
	}
	res, err := r.Services.Compute.Restart(ctx, c, id)
	if err != nil {
		return nil, err
	}
	if l := loaders.For(ctx); l != nil {
		l.VMByID.Clear(ctx, id).Prime(ctx, id, res.VM)
		l.GPUsByVM.Clear(ctx, id).Prime(ctx, id, res.GPUs)
		l.VolumeByVM.Clear(ctx, id)
		if res.Model != nil {
			l.ModelByID.Prime(ctx, res.Model.ID, res.Model)
		}
	}
	return res.VM, nil
}
