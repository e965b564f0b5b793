package resolvers

import (
	"context"

	"gpugraph/internal/auth"
	"gpugraph/internal/httpapi/loaders"
	"gpugraph/internal/services/compute"
	"gpugraph/models"
)

// CreateVM is the mutation createVm: package compute checks the
// permission and the input, places or queues; this primes the request's
// loaders with what the create read, as restartVm does.
func (r *mutationResolver) CreateVM(ctx context.Context, input compute.CreateRequest) (*models.VM, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return nil, err
	}
	res, err := r.Services.Compute.Create(ctx, c, input)
	if err != nil {
		return nil, err
	}
	if l := loaders.For(ctx); l != nil {
		l.VMByID.Prime(ctx, res.VM.ID, res.VM)
		l.GPUsByVM.Prime(ctx, res.VM.ID, res.GPUs)
		l.ModelByID.Prime(ctx, res.Model.ID, res.Model)
	}
	return res.VM, nil
}

// QueuePosition is where a pending VM stands in its organization's queue:
// one count for each pending row of a page (rows in another status answer
// null without a statement). The row came through the caller's loaders,
// so it is the caller's.
func (r *vmResolver) QueuePosition(ctx context.Context, v *models.VM) (*int, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return nil, err
	}
	return r.svc.Compute.QueuePosition(ctx, c, v)
}
