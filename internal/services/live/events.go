package live

import (
	"context"
	"time"

	"gpugraph/internal/auth"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/store"
	"gpugraph/models"
)

// MayRead is the permission the workload and node subscriptions need:
// compute.read, as the VMs and nodes they follow (billing events have the
// money's gate instead, BillingEvents). VMEvents and NodeEvents check it first (and the
// recheck of an open stream again); a face that reads arguments of its own
// before opening one asks it first, so that a refusal answers before a bad
// argument does. It needs no Feed: a server that streams nothing still
// answers who may not subscribe.
func (f *Feed) MayRead(c *auth.Caller) error { return c.Require(auth.ComputeRead) }

// VMEvents streams the events of the caller's organization (of the VMs
// ids only, when given) after the event id after (the organization's own
// numbering, models.VMEvent.Seq), or from now when after is nil. The channel closes when ctx ends or the stream does; end, when
// not nil, is called first with the reason of an end that is not ctx's.
func (f *Feed) VMEvents(ctx context.Context, c *auth.Caller, ids []string, after *int64, end func(*apierr.Error)) (<-chan *models.VMEvent, error) {
	if err := f.MayRead(c); err != nil {
		return nil, err
	}
	if len(ids) > maxIDs {
		return nil, apierr.BadRequest("ids lists %d VMs; a subscription follows at most %d (or omit ids for all of them)", len(ids), maxIDs)
	}
	org := c.OrganizationID
	return open(f, ctx, c, f.MayRead, source[*models.VMEvent]{
		topic: store.TopicVMEvents,
		bounds: func(ctx context.Context) (int64, int64, error) {
			return f.store.EventLogBounds(ctx, org)
		},
		read: func(ctx context.Context, after int64, limit int) ([]*models.VMEvent, error) {
			return f.store.EventsAfter(ctx, org, ids, after, limit)
		},
		// The organization's own numbering: another's events leave no gap.
		id: func(e *models.VMEvent) int64 { return e.Seq },
		at: func(e *models.VMEvent) time.Time { return e.At },
	}, after, end)
}

// NodeEvents streams node events (of the nodes ids only, when given) after
// the event id after, or from now when after is nil, as VMEvents does.
// Nodes are shared inventory: a caller who may read nodes (compute.read,
// as the nodes query asks) reads every node's events; an event carries no
// organization's allocation, and what a subscriber asks below it (node.vms,
// gpu.vm) resolves for its own organization only.
func (f *Feed) NodeEvents(ctx context.Context, c *auth.Caller, ids []string, after *int64, end func(*apierr.Error)) (<-chan *models.NodeEvent, error) {
	if err := f.MayRead(c); err != nil {
		return nil, err
	}
	if len(ids) > maxIDs {
		return nil, apierr.BadRequest("ids lists %d nodes; a subscription follows at most %d (or omit ids for all of them)", len(ids), maxIDs)
	}
	return open(f, ctx, c, f.MayRead, source[*models.NodeEvent]{
		topic:  store.TopicNodeEvents,
		bounds: f.store.NodeEventLogBounds,
		read: func(ctx context.Context, after int64, limit int) ([]*models.NodeEvent, error) {
			return f.store.NodeEventsAfter(ctx, ids, after, limit)
		},
		id: func(e *models.NodeEvent) int64 { return e.ID },
		at: func(e *models.NodeEvent) time.Time { return e.At },
	}, after, end)
}

// BillingEvents streams organization orgID's billing events after its
// event after (models.BillingEvent.Seq, the organization's own numbering),
// or from now when after is nil, as VMEvents does. Who may read which
// organization's money is the metering service's to say, not the feed's:
// the service asks may before it calls this, and hands it here so that
// the recheck asks it again (a key that lost billing.read, or an operator's
// that lost nodes.admin, is closed with 4403).
func (f *Feed) BillingEvents(ctx context.Context, c *auth.Caller, orgID string, may func(*auth.Caller) error, after *int64, end func(*apierr.Error)) (<-chan *models.BillingEvent, error) {
	if err := may(c); err != nil {
		return nil, err
	}
	return open(f, ctx, c, may, source[*models.BillingEvent]{
		topic: store.TopicBillingEvents,
		bounds: func(ctx context.Context) (int64, int64, error) {
			return f.store.BillingEventBounds(ctx, orgID)
		},
		read: func(ctx context.Context, after int64, limit int) ([]*models.BillingEvent, error) {
			evs, err := f.store.BillingEvents(ctx, orgID, after, limit)
			out := make([]*models.BillingEvent, len(evs))
			for i := range evs {
				out[i] = &evs[i]
			}
			return out, err
		},
		id: func(e *models.BillingEvent) int64 { return e.Seq },
		at: func(e *models.BillingEvent) time.Time { return e.At },
	}, after, end)
}
