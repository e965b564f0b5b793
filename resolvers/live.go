package resolvers

import (
	"context"
	"net/http"
	"strconv"

	"gpugraph/apierr"
	"gpugraph/auth"
	"gpugraph/graph"
	"gpugraph/live"
	"gpugraph/loaders"
	"gpugraph/models"
)

func (r *Resolver) Subscription() graph.SubscriptionResolver { return &subscriptionResolver{r} }

type subscriptionResolver struct{ *Resolver }

// VMEvents is the subscription vmEvents: the caller's organization's
// events, through the process's Feed. A stream that ends for a reason of
// its own (lagging, shutdown) says so in an error message and, on a
// WebSocket, in the close code.
func (r *subscriptionResolver) VMEvents(ctx context.Context, ids []string, after *string) (<-chan *models.VMEvent, error) {
	c, err := auth.Require(ctx, auth.ComputeRead)
	if err != nil {
		return nil, err
	}
	if r.Live == nil {
		return nil, apierr.New(http.StatusServiceUnavailable, apierr.Unavailable, "this server streams no live updates")
	}
	var from *int64
	if after != nil {
		n, err := strconv.ParseInt(*after, 10, 64)
		if err != nil {
			return nil, apierr.BadRequest("after must be an event id (a whole number), got %q", *after)
		}
		from = &n
	}
	// A WebSocket closes with the end's code, its reason saying where to
	// resume. (Not an error message on the operation: gqlgen reads those
	// when its own goroutine ends, which races with a connection closing.)
	// An SSE stream just ends; its client resumes with after as after any
	// disconnect.
	return r.Live.VMEvents(ctx, c, ids, from, func(e *apierr.Error) {
		live.CloseConn(ctx, live.CloseCode(e), live.CloseReason(e))
	})
}

// VM is the event's VM as it stands now, through the event's own loaders
// (httpapi gives each event of a subscription fresh ones).
func (r *vmEventResolver) VM(ctx context.Context, e *models.VMEvent) (*models.VM, error) {
	return loaders.For(ctx).VMByID.Load(ctx, e.VMID)()
}
