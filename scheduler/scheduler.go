// Package scheduler places pending VMs and pods once capacity frees: the
// queue that createVm's "nothing fits now" leaves behind, as the
// Kubernetes scheduler's queue holds pending pods.
//
// A pass ([Service.Pass]) reads every organization's queue (priority,
// higher first, then arrival: createdAt, then id), at most PerOrg rows of
// each, interleaves them fairly ([Fair]), reads the fleet once and tries
// each row in that order: placement chooses from the pass's view of the
// fleet, and package compute claims in one transaction that locks the row
// (FOR UPDATE SKIP LOCKED on PostgreSQL), checks it is still pending, locks
// the node and checks it again under the restart lock order. A row that
// does not fit is skipped, not waited on: a large request at the head of a
// queue does not hold back smaller ones behind it that fit (backfill), and
// once one row of a shape (model, count, host share, scope) found no room,
// the pass tries no other of that shape.
//
// # Fairness
//
// Round robin across organizations: the first round takes each
// organization's head, the second each one's second row, and so on; within
// a round, rows go by priority, then arrival. So one organization's 10,000
// pending rows do not starve another's one: that one is in the first round,
// next to the other's first. Priority orders an organization's own queue
// and breaks ties within a round; it never gives an organization more than
// one row a round.
//
// # Replicas
//
// Every replica runs a [Runner]; the database is the only state. Two
// passes at once place different rows (a locked row is skipped; a row seen
// pending but placed meanwhile is found not pending under its lock), and
// claims of one node serialize on the node row, so a row is placed exactly
// once and no GPU is held twice. On SQLite the writer is single.
package scheduler

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"gpugraph/compute"
	"gpugraph/models"
	"gpugraph/store"
)

// DefaultPerOrg bounds how many rows of each organization's queue one pass
// reads: a pass's work is bounded whatever the queue's length.
const DefaultPerOrg = 1000

// maxRereads bounds how often one pass reads the fleet again after a
// placement found its node changed (other writers claiming it).
const maxRereads = 3

// Service is the scheduler's decision: which pending rows to try, in what
// order, and which have waited too long.
type Service struct {
	store   *store.Store
	compute *compute.Service
	// PerOrg is how many rows of each organization one pass reads.
	PerOrg int
}

// New is the scheduler over st, placing through cs.
func New(st *store.Store, cs *compute.Service) *Service {
	return &Service{store: st, compute: cs, PerOrg: DefaultPerOrg}
}

// Result is what one pass did.
type Result struct {
	Read   int // pending rows read
	Placed int // placed (queue-placed)
}

// Pass tries the pending rows once, in fair order, and places those that
// fit now.
func (s *Service) Pass(ctx context.Context) (Result, error) {
	var res Result
	queued, err := s.store.HasPending(ctx)
	if err != nil || !queued {
		return res, err
	}
	rows, err := s.store.PendingQueues(ctx, s.PerOrg)
	if err != nil {
		return res, err
	}
	res.Read = len(rows)
	fleet, err := s.compute.ReadFleet(ctx)
	if err != nil {
		return res, err
	}
	rereads := 0
	for _, vm := range Fair(rows) {
		if fleet.Stale() && rereads < maxRereads {
			rereads++
			if fleet, err = s.compute.ReadFleet(ctx); err != nil {
				return res, err
			}
		}
		placed, err := s.compute.PlaceQueued(ctx, fleet, vm)
		if err != nil {
			return res, err
		}
		if placed {
			res.Placed++
		}
	}
	return res, nil
}

// Fair orders pending rows, grouped by organization and in queue order
// within each (as the store reads them), round robin across organizations:
// round r holds each organization's r-th row, by priority (higher first),
// then arrival (createdAt, rows without one last), then id.
func Fair(rows []models.VM) []*models.VM {
	var queues [][]*models.VM
	for i := range rows {
		if i == 0 || rows[i].OrganizationID != rows[i-1].OrganizationID {
			queues = append(queues, nil)
		}
		queues[len(queues)-1] = append(queues[len(queues)-1], &rows[i])
	}
	out := make([]*models.VM, 0, len(rows))
	for r := 0; ; r++ {
		var round []*models.VM
		for _, q := range queues {
			if r < len(q) {
				round = append(round, q[r])
			}
		}
		if len(round) == 0 {
			return out
		}
		slices.SortFunc(round, queueOrder)
		out = append(out, round...)
	}
}

// queueOrder is priority, higher first, then arrival, then id.
func queueOrder(a, b *models.VM) int {
	if c := cmp.Compare(b.Priority, a.Priority); c != 0 {
		return c
	}
	switch {
	case a.CreatedAt == nil && b.CreatedAt != nil:
		return 1
	case a.CreatedAt != nil && b.CreatedAt == nil:
		return -1
	case a.CreatedAt != nil && !a.CreatedAt.Equal(*b.CreatedAt):
		return a.CreatedAt.Compare(*b.CreatedAt)
	}
	return cmp.Compare(a.ID, b.ID)
}

// timeoutBatch bounds the rows one transaction of TimeOut fails.
const timeoutBatch = 500

// TimeOut fails the rows pending for longer than timeout (queue-timeout),
// in batches, and answers how many.
func (s *Service) TimeOut(ctx context.Context, now time.Time, timeout time.Duration) (int64, error) {
	t := models.Step(models.QueueTimeout)
	waited := store.Workloads{InStatusBefore: now.Add(-timeout), Limit: timeoutBatch}
	change := store.Change{Transition: t.Name, Actor: models.Actor{Kind: models.ActorScheduler}, Detail: TimeoutDetail(timeout)}
	var total int64
	for {
		n, err := s.timeOutBatch(ctx, waited, change, now)
		total += n
		if err != nil || n < timeoutBatch {
			return total, err
		}
	}
}

func (s *Service) timeOutBatch(ctx context.Context, w store.Workloads, ch store.Change, now time.Time) (int64, error) {
	var n int64
	err := s.store.InTx(ctx, func(tx *store.Txn) error {
		var err error
		n, err = s.store.ApplyToWorkloads(tx, w, ch, now)
		return err
	})
	return n, err
}

// TimeoutDetail is the statusReason detail of a row that waited longer
// than timeout.
func TimeoutDetail(timeout time.Duration) string {
	return fmt.Sprintf("waited longer than %s (--pending-timeout) for a node with room", timeout)
}
