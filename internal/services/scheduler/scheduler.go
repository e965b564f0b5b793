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
// Round robin across organizations, and the turn rotates: each queue
// placement records, in its transaction, that its organization was served
// (store.ServedFromQueue, a sequence number), and a pass orders the
// organizations with pending rows least recently served first (one never
// served before all; ties by their heads' arrival: createdAt, then id).
// The first round takes each organization's head in that order, the
// second each one's second row, and so on. So one organization's 10,000
// pending rows do not starve another's one, and a slot freed one at a time
// goes to each organization in turn: the one just served waits for the
// others. Priority orders an organization's own queue only; it never moves
// an organization ahead of another.
//
// # Replicas
//
// Every replica runs a [Runner]; the database is the only state, the turn
// across organizations included. Two passes at once place different rows
// (a locked row is skipped; a row seen pending but placed meanwhile is
// found not pending under its lock), and claims of one node serialize on
// the node row, so a row is placed exactly once and no GPU is held twice.
// On SQLite the writer is single.
package scheduler

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"gpugraph/internal/services/compute"
	"gpugraph/internal/store"
	"gpugraph/models"
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
	turns, err := s.store.QueueTurns(ctx)
	if err != nil {
		return res, err
	}
	res.Read = len(rows)
	fleet, err := s.compute.ReadNodeView(ctx)
	if err != nil {
		return res, err
	}
	rereads := 0
	for _, vm := range Fair(rows, turns) {
		if fleet.Stale() && rereads < maxRereads {
			rereads++
			if fleet, err = s.compute.ReadNodeView(ctx); err != nil {
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
// within each (as the store reads them), round robin across organizations
// in turn order: round r holds each organization's r-th row, the
// organizations least recently served first by turns (the sequence number
// of each one's last queue placement; one not in it was never served and
// goes before all), ties by their heads' arrival (createdAt, rows without
// one last, then id).
func Fair(rows []models.VM, turns map[string]int64) []*models.VM {
	var queues [][]*models.VM
	for i := range rows {
		if i == 0 || rows[i].OrganizationID != rows[i-1].OrganizationID {
			queues = append(queues, nil)
		}
		queues[len(queues)-1] = append(queues[len(queues)-1], &rows[i])
	}
	slices.SortFunc(queues, func(a, b []*models.VM) int { return turnOrder(a[0], b[0], turns) })
	out := make([]*models.VM, 0, len(rows))
	for r := 0; ; r++ {
		n := len(out)
		for _, q := range queues {
			if r < len(q) {
				out = append(out, q[r])
			}
		}
		if len(out) == n {
			return out
		}
	}
}

// turnOrder orders two organizations by their queues' heads a and b:
// never served first, then least recently served, then the heads'
// arrival.
func turnOrder(a, b *models.VM, turns map[string]int64) int {
	sa, servedA := turns[a.OrganizationID]
	sb, servedB := turns[b.OrganizationID]
	switch {
	case servedA != servedB && !servedA:
		return -1
	case servedA != servedB:
		return 1
	case sa != sb:
		return cmp.Compare(sa, sb)
	}
	return arrival(a, b)
}

// arrival is createdAt, rows without one last, then id.
func arrival(a, b *models.VM) int {
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
