// Package sweep decides what the absence of heartbeats and the passing of
// time do to nodes, VMs and pods, from the lifecycle table
// (models.Lifecycle): silent nodes go offline and their running rows are
// interrupted (models.NodeLost); rows interrupted too long stop or, for
// pods, end (models.ExpireVM, models.ExpirePod); a node whose leavingAt
// passed is removed with what ran on it (models.NodeRemoval), and running
// rows on a node still to leave carry its instant (models.NodeLeaving);
// rows deploying for too long fail (models.ProvisionTimeout); a teardown
// on a node that has not been online for the teardown grace is given up
// on and frees what it held (models.TeardownExpired).
//
// Service holds these decisions and runs them through the store's
// lock/read/write primitives on a store.Txn, as package compute runs a
// restart; Runner runs them every interval in the server (every replica
// may run one). The database is the only state.
package sweep

import (
	"context"
	"fmt"
	"time"

	"gpugraph/internal/store"
	"gpugraph/models"
)

// Service is the heartbeat sweep and the provision timeout over one store.
type Service struct {
	store *store.Store
}

// New is the sweep over st.
func New(st *store.Store) *Service { return &Service{store: st} }

// batch bounds the rows one expiry or provision-timeout transaction locks.
const batch = 500

// actor is who the sweep's transitions and node events are by.
var actor = models.Actor{Kind: models.ActorSweep}

// Result counts what one sweep changed.
type Result struct {
	NodesOffline int64 // reporting nodes silent for longer than the grace
	Interrupted  int64 // VMs and pods on them, now interrupted (models.NodeLost)
	Stopped      int64 // VMs interrupted too long, now stopped (models.ExpireVM)
	Deleted      int64 // pods interrupted too long, now terminated (models.ExpirePod)
	Leaving      int64 // running rows on a leaving node, now carrying its instant (models.NodeLeaving)
	NodesRemoved int64 // nodes whose leavingAt passed, now removed
	Removed      int64 // VMs and pods on them, now stopped with node_removed (models.NodeRemoval)
}

// Changed reports whether the sweep wrote anything.
func (r Result) Changed() bool {
	return r.NodesOffline+r.Interrupted+r.Stopped+r.Deleted+r.Leaving+r.NodesRemoved+r.Removed > 0
}

// Sweep applies, as of now, what the heartbeats' absence means. Every step
// is a conditional update of rows whose stored state still calls for it,
// so any number of replicas may sweep the same database at any time: a
// second sweep of the same instant changes nothing. Nodes that never
// reported (no lastHeartbeatAt) are left alone.
func (s *Service) Sweep(ctx context.Context, now time.Time, grace time.Duration) (Result, error) {
	var res Result
	err := s.store.InTx(ctx, func(tx *store.Txn) error {
		var e error
		res.NodesOffline, res.Interrupted, e = s.silentNodes(tx, now, now.Add(-grace))
		return e
	})
	if err != nil {
		return res, err
	}
	err = s.store.InTx(ctx, func(tx *store.Txn) error {
		var e error
		res.Leaving, res.NodesRemoved, res.Removed, e = s.leavingNodes(tx, now)
		return e
	})
	if err != nil {
		return res, err
	}
	for {
		var stopped, deleted int64
		err := s.store.InTx(ctx, func(tx *store.Txn) error {
			var e error
			stopped, deleted, e = s.expireInterrupted(tx, now)
			return e
		})
		if err != nil {
			return res, err
		}
		res.Stopped += stopped
		res.Deleted += deleted
		if stopped+deleted < batch {
			return res, nil
		}
	}
}

// silentNodes takes nodes silent since before cutoff offline and applies
// models.NodeLost to the VMs and pods of every such node. The nodes are
// locked before their VMs are touched, so a heartbeat of one of them
// either comes first (and the node is no longer silent) or waits and then
// resumes what was interrupted (models.NodeBack).
func (s *Service) silentNodes(tx *store.Txn, now, cutoff time.Time) (offline, interrupted int64, err error) {
	silent, err := s.store.LockSilentNodes(tx, models.NodeOnline, cutoff, nil)
	if err != nil {
		return 0, 0, err
	}
	var evs []*models.NodeEvent
	if len(silent) > 0 {
		if offline, err = s.store.SetNodesStatus(tx, silent, models.NodeOffline); err != nil {
			return 0, 0, err
		}
		for _, id := range silent {
			evs = append(evs, models.NodeStatusEvent(id, models.NodeOnline, models.NodeOffline, actor, now))
		}
	}
	// Every offline silent node, not only those this sweep took offline: a
	// running row on a node already offline is interrupted too, whoever
	// wrote it.
	lostVMs := models.Step(models.NodeLost)
	lost, err := s.store.LockSilentNodes(tx, models.NodeOffline, cutoff, lostVMs.From)
	if err != nil {
		return offline, 0, err
	}
	if len(lost) > 0 {
		interrupted, err = s.store.ApplyToWorkloads(tx, store.Workloads{NodeIDs: lost},
			store.Change{Transition: lostVMs.Name, Actor: actor}, now)
		if err != nil {
			return offline, 0, err
		}
	}
	return offline, interrupted, s.store.AppendNodeEvents(tx, evs)
}

// expireInterrupted applies, in one batch, models.ExpireVM and
// models.ExpirePod to the rows that have been interrupted for longer than
// their After: a VM becomes stopped (its disk stays on its node), a pod
// terminated, which is how a deleted pod reads in the OpenRelay API; both
// release their GPUs. The two rows share their from-statuses and After
// (the lifecycle's test checks it), so one read finds both kinds.
func (s *Service) expireInterrupted(tx *store.Txn, now time.Time) (stopped, deleted int64, err error) {
	expireVM, expirePod := models.Step(models.ExpireVM), models.Step(models.ExpirePod)
	rows, err := s.store.LockWorkloads(tx, store.Workloads{InterruptedBefore: now.Add(-expireVM.After), Limit: batch}, expireVM.From)
	if err != nil || rows.Len() == 0 {
		return 0, 0, err
	}
	// Each row takes the transition of its kind; the other skips it.
	if stopped, err = s.store.ApplyToLocked(tx, rows, store.Change{Transition: expireVM.Name, Actor: actor}, now); err != nil {
		return 0, 0, err
	}
	if deleted, err = s.store.ApplyToLocked(tx, rows, store.Change{Transition: expirePod.Name, Actor: actor}, now); err != nil {
		return 0, 0, err
	}
	return stopped, deleted, nil
}

// leavingNodes carries out the operators' decommissions as of now. A node
// whose leavingAt has passed becomes removed, and its VMs and pods end
// with models.NodeRemoval (GPUs released, disk gone): the nodes are
// locked, by id, before their rows, as silentNodes does. A running row on
// a node still to leave that does not carry the leaving reason (it became
// running after the operator set leavingAt) gets it (models.NodeLeaving),
// so the reason holds whatever the order of events.
func (s *Service) leavingNodes(tx *store.Txn, now time.Time) (leaving, nodesRemoved, removed int64, err error) {
	left, err := s.store.LockNodesLeft(tx, now)
	if err != nil {
		return 0, 0, 0, err
	}
	if len(left) > 0 {
		gone := make([]string, len(left))
		evs := make([]*models.NodeEvent, len(left))
		for i, n := range left {
			gone[i] = n.ID
			evs[i] = models.NodeStatusEvent(n.ID, n.Status, models.NodeRemoved, actor, now)
		}
		if nodesRemoved, err = s.store.SetNodesStatus(tx, gone, models.NodeRemoved); err != nil {
			return 0, 0, 0, err
		}
		removed, err = s.store.ApplyToWorkloads(tx, store.Workloads{NodeIDs: gone},
			store.Change{Transition: models.NodeRemoval, Actor: actor}, now)
		if err != nil {
			return 0, 0, 0, err
		}
		if err := s.store.AppendNodeEvents(tx, evs); err != nil {
			return 0, 0, 0, err
		}
	}

	mark := models.Step(models.NodeLeaving)
	ahead, err := s.store.NodesLeavingAfter(tx, now, mark.From)
	if err != nil {
		return 0, 0, 0, err
	}
	for _, n := range ahead {
		at := *n.LeavingAt
		c, err := s.store.ApplyToWorkloads(tx, store.Workloads{NodeIDs: []string{n.ID}, ReasonNot: models.LeavingReason(at)},
			store.Change{Transition: mark.Name, Actor: actor, Detail: models.LeavingDetail(at)}, now)
		if err != nil {
			return 0, 0, 0, err
		}
		leaving += c
	}
	return leaving, nodesRemoved, removed, nil
}

// DefaultProvisionTimeout is how long a row may stay deploying before the
// sweep fails it (models.ProvisionTimeout), when the server sets none.
const DefaultProvisionTimeout = 10 * time.Minute

// ProvisionTimeoutDetail is the sentence after "container failed to start: "
// of a row that stayed deploying for timeout.
func ProvisionTimeoutDetail(timeout time.Duration) string {
	return fmt.Sprintf("it was still deploying after %s; no node agent reported it running.", timeout)
}

// FailStuckDeploying applies models.ProvisionTimeout to every row that has
// been deploying since before now − timeout, in batches under row locks.
// The lock re-reads each row, so a row an agent moved to running meanwhile
// is left alone, and any number of replicas may run it at once. It answers
// how many rows failed.
func (s *Service) FailStuckDeploying(ctx context.Context, now time.Time, timeout time.Duration) (int64, error) {
	t := models.Step(models.ProvisionTimeout)
	stuck := store.Workloads{InStatusBefore: now.Add(-timeout), Limit: batch}
	change := store.Change{Transition: t.Name, Actor: actor, Detail: ProvisionTimeoutDetail(timeout)}
	return s.inBatches(ctx, change, now, func(tx *store.Txn) (store.LockedRows, error) {
		return s.store.LockWorkloads(tx, stuck, t.From)
	})
}

// DefaultTeardownGrace is how long a teardown waits for its node to report
// it gone, while the node is not online, before the sweep frees what it
// held (models.TeardownExpired), when the server sets none.
const DefaultTeardownGrace = 5 * time.Minute

// ExpireTeardowns applies models.TeardownExpired to every row tearing down
// on a node that is not online and has sent no report since before now −
// grace, in batches: the node cannot tear it down, and what it held goes
// back to placement (an agent that comes back later drops it, no longer
// assigned). Nodes are locked before the rows on them and each write is
// conditional on the locked state, so any number of replicas may run it
// at once. It answers how many rows it freed.
func (s *Service) ExpireTeardowns(ctx context.Context, now time.Time, grace time.Duration) (int64, error) {
	change := store.Change{Transition: models.TeardownExpired, Actor: actor}
	return s.inBatches(ctx, change, now, func(tx *store.Txn) (store.LockedRows, error) {
		return s.store.LockExpiredTeardowns(tx, now.Add(-grace), batch)
	})
}

// inBatches applies change to the rows lock locks (at most batch a
// transaction), one transaction a batch, until a batch changes fewer than
// batch rows; it answers how many rows changed.
func (s *Service) inBatches(ctx context.Context, change store.Change, now time.Time, lock func(*store.Txn) (store.LockedRows, error)) (int64, error) {
	var total int64
	for {
		var n int64
		err := s.store.InTx(ctx, func(tx *store.Txn) error {
			rows, err := lock(tx)
			if err != nil || rows.Len() == 0 {
				n = 0
				return err
			}
			n, err = s.store.ApplyToLocked(tx, rows, change, now)
			return err
		})
		if err != nil {
			return total, err
		}
		total += n
		if n < batch {
			return total, nil
		}
	}
}
