package compute

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"gpugraph/internal/store"
)

// FleetChangesKept is how long the fleet's changes are kept
// (ChangePruning): a fleetCopy reads only what changed after its last read
// while that read is less than half of it old, and every node otherwise.
const FleetChangesKept = 2 * time.Minute

// fleetCopy is this replica's copy of placement's view of every node, as
// a Kubernetes scheduler keeps its cache of the cluster: each use reads
// only the nodes that changed since the last (store.ReadFleet, from the
// changes migration 0028's triggers append in the transaction of every
// write a placement reads), so a create that nothing fits counts every
// node under its reason ("0/N nodes can take it") without reading every
// node and GPU again. It answers what was committed when its read began,
// as a fresh snapshot would: it never decides a claim, which is checked
// under the node's lock as every choice is.
//
// Uses take turns (mu): each reads what changed since the one before,
// usually nothing or a few nodes, so a burst of creates that queue costs
// one small read each. The copy holds no fabric's address holders: an
// InfiniBand pod's create reads its fleet in its own transaction.
type fleetCopy struct {
	st *store.Store
	mu sync.Mutex
	// mark and read: where the last read ended, and when it began.
	mark store.FleetMark
	read time.Time
	// view is every node as of the last read; nil before the first. It is
	// never written once made: a change makes the next one (NodeView.with).
	view *NodeView
}

func newFleetCopy(st *store.Store) *fleetCopy { return &fleetCopy{st: st} }

// current reads in tx what changed since the last use and answers the
// view of every node; tx must have written nothing a placement reads
// (store.ReadFleet). It reads in the caller's transaction, not on a
// connection of its own: callers wait for their turn holding theirs, and
// a turn that needed one more could wait on them for ever. The view is
// shared by the callers until the next change; placement only reads it.
func (c *fleetCopy) current(tx *store.Txn) (*NodeView, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var since *store.FleetMark
	if c.view != nil && time.Since(c.read) < FleetChangesKept/2 {
		since = &c.mark
	}
	began := time.Now()
	read, err := c.st.ReadFleet(tx, since)
	if err != nil {
		return nil, err
	}
	switch {
	case read.Full:
		c.view = newNodeView(read.Snapshot)
	case len(read.Changed) > 0:
		c.view = c.view.with(read.Changed, read.Snapshot)
	}
	c.mark, c.read = read.Mark, began
	return c.view, nil
}

// ChangePruning deletes the fleet's changes every copy has read
// (store.DeleteFleetChangesBefore): every interval it takes the mark of
// now, and deletes before the one it took FleetChangesKept ago. A copy
// read since then, on any replica, has a mark at or past that one (marks
// only grow), and one older reads every node again (fleetCopy.current).
// Every replica runs it; two at once delete the same rows.
type ChangePruning struct {
	store    *store.Store
	interval time.Duration
	// marks are those taken, oldest first, each with when.
	marks []takenMark
}

type takenMark struct {
	mark store.FleetMark
	at   time.Time
}

// NewChangePruning is a runner over st, taking a mark every interval.
func NewChangePruning(st *store.Store, interval time.Duration) *ChangePruning {
	return &ChangePruning{store: st, interval: interval}
}

// Run prunes at once, then every interval, until ctx ends.
func (p *ChangePruning) Run(ctx context.Context) {
	t := time.NewTicker(p.interval)
	defer t.Stop()
	for {
		if err := p.Prune(ctx, time.Now()); err != nil && ctx.Err() == nil {
			slog.ErrorContext(ctx, "fleet change pruning failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Prune takes the mark of now and deletes the changes before the newest
// mark taken at least FleetChangesKept before now.
func (p *ChangePruning) Prune(ctx context.Context, now time.Time) error {
	m, err := p.store.FleetMarkNow(ctx)
	if err != nil {
		return err
	}
	p.marks = append(p.marks, takenMark{m, now})
	old := -1
	for i, t := range p.marks {
		if now.Sub(t.at) >= FleetChangesKept {
			old = i
		}
	}
	if old < 0 {
		return nil
	}
	cut := p.marks[old].mark
	p.marks = p.marks[old+1:]
	_, err = p.store.DeleteFleetChangesBefore(ctx, cut)
	return err
}
