package metering

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"gpugraph/internal/auth"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/store"
	"gpugraph/models"
)

// The reconciliation (gpugraph billing reconcile) recomputes usage from
// the event log on its own, without the pass's cursors or carries: each
// workload's transitions from its first kept event, at the prices on the
// events, cut at where its usage is closed (its cursor's through). It
// compares, per workload, kind and UTC hour in the window, the
// milliseconds and cost the events give with the records', and, per
// prepaid organization, the usage debits written in the window with the
// cost of the records closed in it.

// Difference is one disagreement: of a workload's usage in one hour
// (VMID set) or of an organization's ledger (VMID "").
type Difference struct {
	OrganizationID string
	VMID           string
	Kind           models.UsageKind
	Hour           time.Time
	// RecordIDs are the records of that workload, kind and hour.
	RecordIDs []int64
	// What the event log gives, and what the records (or, for a ledger,
	// the debits and the records closed) say.
	EventsMs, RecordsMs     int64
	EventsCost, RecordsCost int64
}

func (d Difference) String() string {
	if d.VMID == "" {
		return fmt.Sprintf("organization %s: the ledger's usage debits are %d µ¢; the records closed while it was prepaid cost %d µ¢",
			d.OrganizationID, d.EventsCost, d.RecordsCost)
	}
	ids := make([]string, len(d.RecordIDs))
	for i, id := range d.RecordIDs {
		ids[i] = strconv.FormatInt(id, 10)
	}
	recs := "no record"
	if len(ids) > 0 {
		recs = "records " + strings.Join(ids, ", ")
	}
	return fmt.Sprintf("%s (%s) %s %s: the event log gives %d ms, %d µ¢; %s say %d ms, %d µ¢",
		d.VMID, d.OrganizationID, d.Kind, d.Hour.Format(time.RFC3339), d.EventsMs, d.EventsCost, recs, d.RecordsMs, d.RecordsCost)
}

// Reconciliation is what Reconcile compared and found.
type Reconciliation struct {
	From, To time.Time
	// Workloads and Records compared; Organizations' ledgers compared.
	Workloads, Records, Organizations int
	// Unverifiable counts the workloads whose usage the event log cannot
	// give: none of their events is kept (a fixture's rows, metered from
	// the first pass), or their records start before the first kept one.
	Unverifiable int
	Differences  []Difference
}

// Reconcile compares the usage closed over [from, to) (whole UTC hours, at
// most 366 days) with the event log and the ledgers, of organization
// orgID only unless "". An operator's.
func (s *Service) Reconcile(ctx context.Context, caller *auth.Caller, from, to time.Time, orgID string) (*Reconciliation, error) {
	if err := s.MayAdminister(caller); err != nil {
		return nil, err
	}
	from, to = from.UTC(), to.UTC()
	if !from.Before(to) {
		return nil, apierr.BadRequest("from %s is not before to %s", from.Format(time.RFC3339), to.Format(time.RFC3339))
	}
	if !from.Equal(from.Truncate(time.Hour)) || !to.Equal(to.Truncate(time.Hour)) {
		return nil, apierr.BadRequest("from and to must be whole UTC hours (a usage record never crosses one)")
	}
	if to.Sub(from) > MaxUsageWindow {
		return nil, apierr.BadRequest("to is more than 366 days after from")
	}
	if orgID != "" {
		if err := s.known(ctx, orgID); err != nil {
			return nil, err
		}
	}
	cursors, err := s.store.CursorsThrough(ctx, orgID)
	if err != nil {
		return nil, err
	}
	price, err := s.store.StoragePriceNow(ctx)
	if err != nil {
		return nil, err
	}
	out := &Reconciliation{From: from, To: to}
	for part := range slices.Chunk(cursors, 200) {
		ids := make([]string, len(part))
		for i, c := range part {
			ids[i] = c.VMID
		}
		r, err := s.store.ReadForReconcile(ctx, ids, from, to)
		if err != nil {
			return nil, err
		}
		for _, c := range part {
			evs, recs := r.Events[c.VMID], r.Records[c.VMID]
			first, has := r.FirstPeriod[c.VMID]
			if len(evs) == 0 || has && first.Before(evs[0].At.Truncate(Resolution)) {
				if len(recs) > 0 {
					out.Unverifiable++
				}
				continue
			}
			out.Workloads++
			out.Records += len(recs)
			want := recompute(evs, r.VMs[c.VMID], price, c.Through)
			out.Differences = append(out.Differences, compare(c, want, recs, from, to)...)
		}
	}
	ledgers, err := s.store.LedgerUsageIn(ctx, from, to, orgID)
	if err != nil {
		return nil, err
	}
	for _, l := range ledgers {
		out.Organizations++
		if l.DebitMicroCents != l.ClosedMicroCents {
			out.Differences = append(out.Differences, Difference{OrganizationID: l.OrganizationID,
				EventsCost: l.DebitMicroCents, RecordsCost: l.ClosedMicroCents})
		}
	}
	return out, nil
}

// hourKey is one workload's usage of one kind in one UTC hour.
type hourKey struct {
	kind models.UsageKind
	hour int64 // Unix seconds of the hour's start
}

// hourUsage is what the event log gives for an hour: its milliseconds,
// and its cost as the records of a workload add up to, rounded down once
// over the workload's life: ⌊X(end)/MsPerHour⌋ − ⌊X(start)/MsPerHour⌋,
// X the exact cost accrued so far (µ¢ × ms per hour).
type hourUsage struct {
	ms, cost int64
}

// recompute walks a workload's events, from the first (in the state
// before it), to through: running accrues compute at the price on the
// event that made it run, stopped accrues storage for the GB the event
// says it keeps; the answer is per kind and hour.
func recompute(evs []*models.VMEvent, vm store.MeteredVM, storagePrice int64, through time.Time) map[hourKey]hourUsage {
	out := map[hourKey]hourUsage{}
	exact := map[models.UsageKind]int64{}
	accrue := func(kind models.UsageKind, a, b time.Time, rate int64) {
		for a.Before(b) {
			e := a.Truncate(time.Hour).Add(time.Hour)
			if e.After(b) {
				e = b
			}
			ms := e.Sub(a).Milliseconds()
			before := exact[kind]
			exact[kind] += rate * ms
			k := hourKey{kind, a.Truncate(time.Hour).Unix()}
			u := out[k]
			u.ms += ms
			u.cost += exact[kind]/MsPerHour - before/MsPerHour
			out[k] = u
			a = e
		}
	}
	priceOf := func(e *models.VMEvent) int64 {
		if e.PricePerHourCents != nil {
			return int64(*e.PricePerHourCents)
		}
		return int64(vm.PricePerHourCents)
	}
	through = through.UTC().Truncate(Resolution)
	status, price, gb := evs[0].From, priceOf(evs[0]), int64(0)
	t := evs[0].At.UTC().Truncate(Resolution)
	for _, e := range append(evs, &models.VMEvent{At: through}) {
		at := e.At.UTC().Truncate(Resolution)
		if at.After(through) {
			at = through
		}
		if at.After(t) {
			switch {
			case status == models.VMRunning:
				accrue(models.UsageCompute, t, at, price*models.MicroCentsPerCent)
			case status == models.VMStopped && gb*storagePrice > 0:
				accrue(models.UsageStorage, t, at, gb*storagePrice)
			}
			t = at
		}
		if !at.Before(through) {
			break
		}
		status, price, gb = e.To, priceOf(e), 0
		if e.To == models.VMStopped {
			gb = int64(e.StorageGb)
		}
	}
	return out
}

// compare answers the hours in [from, to) where want (from the event log)
// and recs (the records) disagree.
func compare(c store.CursorThrough, want map[hourKey]hourUsage, recs []models.UsageRecord, from, to time.Time) []Difference {
	got := map[hourKey]hourUsage{}
	ids := map[hourKey][]int64{}
	for _, r := range recs {
		k := hourKey{r.Kind, r.PeriodStart.Truncate(time.Hour).Unix()}
		u := got[k]
		u.ms += r.Milliseconds
		u.cost += r.CostMicroCents
		got[k] = u
		ids[k] = append(ids[k], r.ID)
	}
	keys := map[hourKey]bool{}
	for k := range got {
		keys[k] = true
	}
	for k := range want {
		if h := time.Unix(k.hour, 0); !h.Before(from) && h.Before(to) {
			keys[k] = true
		}
	}
	var out []Difference
	for k := range keys {
		w, g := want[k], got[k]
		if w != g {
			out = append(out, Difference{OrganizationID: c.OrganizationID, VMID: c.VMID, Kind: k.kind,
				Hour: time.Unix(k.hour, 0).UTC(), RecordIDs: ids[k], EventsMs: w.ms, RecordsMs: g.ms, EventsCost: w.cost, RecordsCost: g.cost})
		}
	}
	slices.SortFunc(out, func(a, b Difference) int {
		if c := a.Hour.Compare(b.Hour); c != 0 {
			return c
		}
		return strings.Compare(string(a.Kind), string(b.Kind))
	})
	return out
}
