package resolvers

import (
	"context"
	"strconv"

	"gpugraph/graph"
	"gpugraph/internal/auth"
	"gpugraph/internal/fieldmodel"
	"gpugraph/internal/httpapi/loaders"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/lib/bounds"
	"gpugraph/internal/services/compute"
	"gpugraph/models"
)

func (r *Resolver) VmEvent() graph.VmEventResolver { return &vmEventResolver{} }

type vmEventResolver struct{ graph.VmEventLoads }

// StopVM is the mutation stopVm: package compute checks, locks and applies
// the lifecycle's user-stop.
func (r *mutationResolver) StopVM(ctx context.Context, id string) (*models.VM, error) {
	return r.end(ctx, id, (*compute.Service).Stop)
}

// TerminateVM is the mutation terminateVm (the lifecycle's user-terminate).
func (r *mutationResolver) TerminateVM(ctx context.Context, id string) (*models.VM, error) {
	return r.end(ctx, id, (*compute.Service).Terminate)
}

func (r *mutationResolver) end(ctx context.Context, id string,
	op func(*compute.Service, context.Context, *auth.Caller, string) (*compute.Result, error)) (*models.VM, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return nil, err
	}
	res, err := op(r.Services.Compute, ctx, c, id)
	if err != nil {
		return nil, err
	}
	// The answer's nested fields read what the change left, not what a
	// field of the same request read before it.
	if l := loaders.For(ctx); l != nil {
		l.VMByID.Clear(ctx, id).Prime(ctx, id, res.VM)
		l.GPUsByVM.Clear(ctx, id).Prime(ctx, id, res.GPUs)
		l.VolumeByVM.Clear(ctx, id)
		l.EventsByVM.Clear(ctx, id)
		if res.Model != nil {
			l.ModelByID.Prime(ctx, res.Model.ID, res.Model)
		}
	}
	return res.VM, nil
}

var vmEvents = fieldmodel.Declared.Field("VM", "events")

// Events pages the VM's event log, read whole through the request's loader
// as VM.events is declared (one statement for a page of VMs).
func (r *vmResolver) Events(ctx context.Context, v *models.VM, after *string, limit *int) ([]*models.VMEvent, error) {
	var from *int64
	if after != nil {
		n, ok := bounds.ParseInt(*after)
		if !ok {
			return nil, apierr.BadRequest("after must be an event id (a whole number), got %q", *after)
		}
		from = &n
	}
	q, err := compute.ParseEventQuery(from, limit)
	if err != nil {
		return nil, err
	}
	all, err := fieldmodel.Resolve[[]*models.VMEvent](ctx, vmEvents, v)
	if err != nil {
		return nil, err
	}
	out := []*models.VMEvent{}
	for _, e := range all {
		if e.Seq > q.After && len(out) < q.Limit {
			out = append(out, e)
		}
	}
	return out, nil
}

// ID is the event's number in its organization's log (never the log's
// global row id, which would show others' activity between two events).
func (r *vmEventResolver) ID(ctx context.Context, e *models.VMEvent) (string, error) {
	return strconv.FormatInt(e.Seq, 10), nil
}

func (r *vmEventResolver) Transition(ctx context.Context, e *models.VMEvent) (string, error) {
	return string(e.Transition), nil
}

func (r *vmEventResolver) Actor(ctx context.Context, e *models.VMEvent) (string, error) {
	return e.Actor().String(), nil
}
