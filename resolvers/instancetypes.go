package resolvers

import (
	"context"

	"gpugraph/graph/model"
	"gpugraph/internal/auth"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/services/instancetypes"
	"gpugraph/internal/services/quotas"
	"gpugraph/models"
)

// The instance type catalog and the GPU quotas: packages instancetypes
// and quotas check the caller and decide; these translate.

func (r *queryResolver) InstanceTypes(ctx context.Context) ([]*instancetypes.Offer, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return nil, err
	}
	offers, err := r.Services.InstanceTypes.Offers(ctx, c)
	if err != nil {
		return nil, err
	}
	out := make([]*instancetypes.Offer, len(offers))
	for i := range offers {
		out[i] = &offers[i]
	}
	return out, nil
}

func (r *queryResolver) InstanceType(ctx context.Context, name string) (*instancetypes.Offer, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return nil, err
	}
	o, err := r.Services.InstanceTypes.Offer(ctx, c, name)
	if e, ok := apierr.As(err); ok && e.Code == instancetypes.CodeNotFound {
		return nil, nil // null, as vm(id) answers a missing one
	}
	if err != nil {
		return nil, err
	}
	return &o, nil
}

func (r *mutationResolver) SetInstanceType(ctx context.Context, in model.InstanceTypeInput) (*instancetypes.Offer, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return nil, err
	}
	svc := r.Services.InstanceTypes
	t := models.InstanceType{Name: in.Name, GPUModelID: in.GPUModelID, GPUCount: orZero(in.GPUCount), CPUCores: orZero(in.CPUCores),
		RAMGb: orZero(in.RAMGb), DiskSizeGb: orZero(in.DiskSizeGb), VolumeGb: orZero(in.VolumeGb),
		PricePerHourCents: orZero(in.PricePerHourCents)}
	if in.Description != nil {
		t.Description = *in.Description
	}
	if t, _, err = svc.Put(ctx, c, t); err != nil {
		return nil, err
	}
	o, err := svc.Offer(ctx, c, t.Name)
	if err != nil {
		return nil, err
	}
	return &o, nil
}

func (r *mutationResolver) DeleteInstanceType(ctx context.Context, name string) (bool, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return false, err
	}
	if err := r.Services.InstanceTypes.Delete(ctx, c, name); err != nil {
		return false, err
	}
	return true, nil
}

func (r *queryResolver) GPUQuotas(ctx context.Context, organizationID *string) ([]*quotas.Quota, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return nil, err
	}
	org := c.OrganizationID
	if organizationID != nil {
		org = *organizationID
	}
	list, err := r.Services.Quotas.List(ctx, c, org)
	if err != nil {
		return nil, err
	}
	out := make([]*quotas.Quota, len(list))
	for i := range list {
		out[i] = &list[i]
	}
	return out, nil
}

func (r *mutationResolver) SetGPUQuota(ctx context.Context, organizationID, gpuModelID string, limit int) (*quotas.Quota, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return nil, err
	}
	q, _, err := r.Services.Quotas.Set(ctx, c, organizationID, gpuModelID, limit)
	if err != nil {
		return nil, err
	}
	return &q, nil
}

func (r *mutationResolver) DeleteGPUQuota(ctx context.Context, organizationID, gpuModelID string) (bool, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return false, err
	}
	if err := r.Services.Quotas.Delete(ctx, c, organizationID, gpuModelID); err != nil {
		return false, err
	}
	return true, nil
}

func orZero(n *int) int {
	if n == nil {
		return 0
	}
	return *n
}
