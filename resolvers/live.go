package resolvers

import (
	"context"
	"net/http"
	"strconv"

	"gpugraph/graph"
	"gpugraph/internal/auth"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/lib/bounds"
	"gpugraph/internal/services/live"
	"gpugraph/models"
)

func (r *Resolver) Subscription() graph.SubscriptionResolver { return &subscriptionResolver{r} }

type subscriptionResolver struct{ *Resolver }

// VMEvents is the subscription vmEvents: the caller's organization's
// events, through the process's Feed.
func (r *subscriptionResolver) VMEvents(ctx context.Context, ids []string, after *string) (<-chan *models.VMEvent, error) {
	c, from, err := r.subscriber(ctx, after)
	if err != nil {
		return nil, err
	}
	return r.Services.Live.VMEvents(ctx, c, ids, from, endStream(ctx))
}

// NodeEvents is the subscription nodeEvents: every node's changes, to a
// caller who may read nodes.
func (r *subscriptionResolver) NodeEvents(ctx context.Context, ids []string, after *string) (<-chan *models.NodeEvent, error) {
	c, from, err := r.subscriber(ctx, after)
	if err != nil {
		return nil, err
	}
	return r.Services.Live.NodeEvents(ctx, c, ids, from, endStream(ctx))
}

// BillingEvents is the subscription billingEvents: an organization's
// billing events (the caller's own unless it names another), through the
// metering service, which decides who may read which organization's money,
// and the process's Feed.
func (r *subscriptionResolver) BillingEvents(ctx context.Context, organizationID *string, after *string) (<-chan *models.BillingEvent, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return nil, err
	}
	m := r.Services.Metering
	if err := m.MayReadMoney(c); err != nil {
		return nil, err
	}
	from, err := afterID(after)
	if err != nil {
		return nil, err
	}
	return m.SubscribeBillingEvents(ctx, c, orgOrOwn(c, organizationID), from, endStream(ctx))
}

// subscriber checks the caller, through the feed's gate before anything
// else, and reads after.
func (r *subscriptionResolver) subscriber(ctx context.Context, after *string) (*auth.Caller, *int64, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return nil, nil, err
	}
	feed := r.Services.Live
	if err := feed.MayRead(c); err != nil {
		return nil, nil, err
	}
	if feed == nil {
		return nil, nil, apierr.New(http.StatusServiceUnavailable, apierr.Unavailable, "this server streams no live updates")
	}
	from, err := afterID(after)
	if err != nil {
		return nil, nil, err
	}
	return c, from, nil
}

// afterID reads a subscription's after: an event id, nil when absent.
func afterID(after *string) (*int64, error) {
	if after == nil {
		return nil, nil
	}
	n, ok := bounds.ParseInt(*after)
	if !ok {
		return nil, apierr.BadRequest("after must be an event id (a whole number), got %q", *after)
	}
	return &n, nil
}

// endStream ends the transport of a stream that ends for a reason of its
// own (lagging, shutdown, credential revoked): a WebSocket closes with the
// end's code, its reason saying why and where to resume; an SSE stream
// sends one last message carrying the error. (Not an error on the
// operation: gqlgen reads those when its own goroutine ends, which races
// with a connection closing.)
func endStream(ctx context.Context) func(*apierr.Error) {
	return func(e *apierr.Error) { live.CloseConn(ctx, e) }
}

func (r *Resolver) NodeEvent() graph.NodeEventResolver { return &nodeEventResolver{} }

// An event's vm and node are the VM and node as they stand now, through
// the event's own loaders (httpapi gives each event of a subscription
// fresh ones, scoped to the caller as every request's are): generated
// from their declarations (graph.VmEventLoads, graph.NodeEventLoads).
type nodeEventResolver struct{ graph.NodeEventLoads }

func (r *nodeEventResolver) ID(ctx context.Context, e *models.NodeEvent) (string, error) {
	return strconv.FormatInt(e.ID, 10), nil
}

func (r *nodeEventResolver) Actor(ctx context.Context, e *models.NodeEvent) (string, error) {
	return e.Actor().String(), nil
}
