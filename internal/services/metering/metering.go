// Package metering turns the event log's transitions into usage and
// money (docs/decisions/0042-metering.md): the metering pass closes each
// workload's usage, period by period, into records keyed so the same
// second is never recorded twice, and debits prepaid organizations'
// ledgers in the same transaction; the service's reads and the operator's
// credits answer balances, burn rates and usage.
//
// A workload (a VM row: plain VMs and the API's pods alike; Run:ai's pods,
// synced from clusters, are not billed here) accrues compute while it is
// running, at the price on the event that made it run (the row's price
// when it was created or last restarted), and storage while it is stopped
// with its disk or volume kept, at the catalog's price per GB-hour; no
// other status accrues anything.
//
// Any number of replicas may run passes over one database, and a pass
// may die anywhere: each workload's cursor (how far its usage is closed,
// and the state the log left it in) is locked, advanced and written with
// its records in one transaction, so a period is closed by one pass or by
// none, and one not closed is closed by the next.
package metering

import (
	"context"
	"fmt"
	"time"

	"gpugraph/internal/services/live"
	"gpugraph/internal/store"
	"gpugraph/models"
)

// Defaults of a Service.
const (
	// DefaultSettle is how far behind its clock a pass closes: a
	// transition's time is taken before its transaction commits, so the
	// pass leaves the last seconds for the next one rather than apply an
	// event it has not seen yet late.
	DefaultSettle = 5 * time.Second
	// DefaultBatch is how many workloads one transaction closes.
	DefaultBatch = 200
)

// Service meters workloads and answers balances and usage.
type Service struct {
	store *store.Store
	clock func() time.Time
	// Settle and Batch: DefaultSettle and DefaultBatch unless set before
	// the first pass.
	Settle time.Duration
	Batch  int
	// Interval is the metering period: a prepaid organization whose
	// balance no longer covers this long of what it runs is stopped.
	// DefaultInterval unless set (NewRunner sets its own).
	Interval time.Duration
	// SpendLimitCentsPerHour is the platform's default spend limit of an
	// organization that has none of its own (--spend-limit-cents-per-hour);
	// 0 is none.
	SpendLimitCentsPerHour int64
	// Feed streams billing events to subscribers (SubscribeBillingEvents);
	// nil: this process streams none.
	Feed *live.Feed
	// onBatch, when set, is told after every committed batch (tests).
	onBatch func(Result)
	stats   stats
}

// New is the metering service over st, reading time from clock (nil:
// store.Now).
func New(st *store.Store, clock func() time.Time) *Service {
	if clock == nil {
		clock = store.Now
	}
	s := &Service{store: st, clock: clock, Settle: DefaultSettle, Batch: DefaultBatch, Interval: DefaultInterval}
	s.stats.started.Store(clock().UnixNano())
	return s
}

// Result is what a pass did.
type Result struct {
	// Through is where the pass closed usage up to.
	Through time.Time
	// Cursors counts the workloads met for the first time; Workloads
	// those whose usage it closed; Records the usage records it wrote;
	// Debits the ledger entries.
	Cursors, Workloads, Records, Debits int
	// Exhausted counts the prepaid organizations whose balance ran out
	// (made balance exhausted), Stopped the workloads that stopped with
	// them, LowBalance the low_balance events raised.
	Exhausted, LowBalance int
	Stopped               int64
}

// Pass closes every workload's usage up to the clock's now less Settle,
// and then settles every prepaid organization's standing: a balance that
// no longer covers the next period of what the organization runs stops
// it, a runway below its threshold raises the low-balance event.
func (s *Service) Pass(ctx context.Context) (Result, error) {
	res, err := s.CloseThrough(ctx, s.clock().Add(-s.Settle))
	if err == nil {
		if err = s.settle(ctx, &res); err != nil {
			err = fmt.Errorf("metering: settle: %w", err)
		}
	}
	if err != nil {
		s.stats.failed.Add(1)
		s.stats.records.Add(int64(res.Records))
		return res, err
	}
	s.passed(res)
	return res, nil
}

// CloseThrough closes every workload's usage up to closeTo: first it
// gives a cursor to every workload that has none, then it closes the
// open cursors in batches of Batch, each batch one transaction. A
// cancelled pass leaves every batch it committed closed and the others as
// they were.
func (s *Service) CloseThrough(ctx context.Context, closeTo time.Time) (Result, error) {
	closeTo = closeTo.UTC().Truncate(Resolution)
	res := Result{Through: closeTo}
	batch := max(s.Batch, 1)
	for {
		n := 0
		err := s.store.InTx(ctx, func(tx *store.Txn) error {
			vms, err := s.store.UnmeteredVMs(tx, batch)
			if err != nil {
				return err
			}
			cs := make([]models.UsageCursor, len(vms))
			for i, v := range vms {
				cs[i] = newCursor(v, closeTo)
			}
			n = len(cs)
			return s.store.CreateCursors(tx, cs)
		})
		if err != nil {
			return res, fmt.Errorf("metering: cursors: %w", err)
		}
		res.Cursors += n
		if n < batch {
			break
		}
	}
	after := ""
	for {
		ids, err := s.store.OpenCursorIDs(ctx, closeTo, after, batch)
		if err != nil {
			return res, fmt.Errorf("metering: open cursors: %w", err)
		}
		if len(ids) == 0 {
			return res, nil
		}
		after = ids[len(ids)-1]
		var b Result
		if err := s.store.InTx(ctx, func(tx *store.Txn) (err error) {
			b, err = s.closeBatch(tx, ids, closeTo)
			return err
		}); err != nil {
			return res, fmt.Errorf("metering: close: %w", err)
		}
		res.Workloads += b.Workloads
		res.Records += b.Records
		res.Debits += b.Debits
		if s.onBatch != nil {
			s.onBatch(b)
		}
	}
}

// closeBatch closes the workloads ids up to closeTo in tx: locks their
// cursors (a cursor another pass holds, or closed already, is left out),
// reads the events each has not applied, writes their records and the
// cursors after them, and debits the prepaid organizations among them.
func (s *Service) closeBatch(tx *store.Txn, ids []string, closeTo time.Time) (Result, error) {
	var res Result
	cs, err := s.store.LockCursors(tx, ids, closeTo)
	if err != nil || len(cs) == 0 {
		return res, err
	}
	evs, err := s.store.EventsToMeter(tx, cs)
	if err != nil {
		return res, err
	}
	locked := make([]string, len(cs))
	for i, c := range cs {
		locked[i] = c.VMID
	}
	vms, err := s.store.MeteredVMs(tx, locked)
	if err != nil {
		return res, err
	}
	price, err := s.store.StoragePrice(tx)
	if err != nil {
		return res, err
	}
	now := s.clock().UTC()
	var recs []*models.UsageRecord
	next := make([]models.UsageCursor, len(cs))
	for i, c := range cs {
		var r []*models.UsageRecord
		r, next[i] = closeUsage(c, evs[c.VMID], vms[c.VMID], price, closeTo, now)
		recs = append(recs, r...)
	}
	written, err := s.store.InsertUsage(tx, recs)
	if err != nil {
		return res, err
	}
	if err := s.store.SaveCursors(tx, next); err != nil {
		return res, err
	}
	debits, err := s.debits(tx, written, closeTo, now)
	if err != nil {
		return res, err
	}
	return Result{Workloads: len(cs), Records: len(written), Debits: debits}, nil
}

// debits appends one usage debit per prepaid organization of the records
// recs, their cost summed, keyed by the first of its records (whose key no
// other record has, so the debit is unique as it is).
func (s *Service) debits(tx *store.Txn, recs []*models.UsageRecord, closeTo, now time.Time) (int, error) {
	var orgs []string
	sum := map[string]int64{}
	first := map[string]*models.UsageRecord{}
	for _, r := range recs {
		if r.CostMicroCents == 0 {
			continue
		}
		if first[r.OrganizationID] == nil {
			orgs = append(orgs, r.OrganizationID)
			first[r.OrganizationID] = r
		}
		sum[r.OrganizationID] += r.CostMicroCents
	}
	prepaid, err := s.store.PrepaidOrganizations(tx, orgs)
	if err != nil {
		return 0, err
	}
	var es []*models.LedgerEntry
	for _, org := range orgs {
		if !prepaid[org] {
			continue
		}
		f := first[org]
		es = append(es, &models.LedgerEntry{OrganizationID: org, Kind: models.LedgerUsage, AmountMicroCents: -sum[org],
			Reason:         "usage closed through " + closeTo.Format(time.RFC3339Nano),
			IdempotencyKey: fmt.Sprintf("usage:%s:%s:%s", f.VMID, f.Kind, f.PeriodStart.Format(time.RFC3339Nano)),
			CreatedAt:      now})
	}
	written, err := s.store.AppendLedger(tx, es)
	return len(written), err
}
