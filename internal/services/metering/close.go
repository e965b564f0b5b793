package metering

import (
	"time"

	"gpugraph/internal/store"
	"gpugraph/models"
)

// Units. A rate is micro-cents per hour (a price of p cents per hour is
// p × 1,000,000; a kept volume of g GB at the catalog's s µ¢ per GB-hour
// is g × s); a span is whole milliseconds. rate × milliseconds is the
// exact cost in units of 1/3,600,000 µ¢, an integer: a period's cost is
// that divided by MsPerHour, rounded down, the remainder carried to the
// workload's next period of the kind. Rounding is therefore done once per
// workload and kind: its records add up to its exact cost rounded down to
// the micro-cent (less than one micro-cent short, ever).
const (
	MsPerHour = int64(time.Hour / time.Millisecond)
	// Resolution is the finest span metered: event times and period
	// bounds are truncated to it.
	Resolution = time.Millisecond
)

// state is what a workload accrues at: its status, the price its running
// time is billed at, the GB it keeps while stopped.
type state struct {
	status models.VMStatus
	price  int
	gb     int
}

// rates answers a state's compute and storage rates, µ¢ per hour:
// running accrues compute at its price; stopped accrues storage for the
// disk or volume it keeps; every other status (pending, deploying,
// interrupted, failed, terminated) nothing.
func (st state) rates(storagePrice int64) (compute, storage int64) {
	switch st.status {
	case models.VMRunning:
		return int64(st.price) * models.MicroCentsPerCent, 0
	case models.VMStopped:
		return 0, int64(st.gb) * storagePrice
	}
	return 0, 0
}

// period is one record in the making: a span of one UTC hour of one kind.
type period struct {
	start, end time.Time
	ms, exact  int64
}

// closeUsage closes the usage of the workload whose cursor is c up to
// closeTo: it walks the events evs (those after c.LastEventID, by id)
// from c's state, applying each at its time (never before the cursor: an
// event committed late is applied where the cursor stands), stops at the
// first event at or after closeTo (the next pass applies it), and answers
// the records of the periods that accrued and the cursor after them. vm
// is the workload's row (its GPUs; its price for events older than the
// price on the event); storagePrice is the catalog's, µ¢ per GB-hour.
func closeUsage(c models.UsageCursor, evs []*models.VMEvent, vm store.MeteredVM, storagePrice int64,
	closeTo, closedAt time.Time) ([]*models.UsageRecord, models.UsageCursor) {
	closeTo = closeTo.UTC().Truncate(Resolution)
	from := c.Through.UTC().Truncate(Resolution)
	periods := map[models.UsageKind][]*period{}
	add := func(kind models.UsageKind, at, end time.Time, ms, exact int64) {
		start := at.Truncate(time.Hour)
		if start.Before(from) {
			start = from
		}
		ps := periods[kind]
		if n := len(ps); n > 0 && ps[n-1].start.Equal(start) {
			ps[n-1].ms += ms
			ps[n-1].exact += exact
			return
		}
		periods[kind] = append(ps, &period{start: start, end: end, ms: ms, exact: exact})
	}
	accrue := func(a, b time.Time, st state) {
		compute, storage := st.rates(storagePrice)
		for a.Before(b) {
			e := a.Truncate(time.Hour).Add(time.Hour)
			if e.After(b) {
				e = b
			}
			end := a.Truncate(time.Hour).Add(time.Hour)
			if end.After(closeTo) {
				end = closeTo
			}
			ms := e.Sub(a).Milliseconds()
			if st.status == models.VMRunning {
				add(models.UsageCompute, a, end, ms, compute*ms)
			}
			if storage > 0 {
				add(models.UsageStorage, a, end, ms, storage*ms)
			}
			a = e
		}
	}

	st := state{status: c.Status, price: c.PricePerHourCents, gb: c.StorageGb}
	t := from
	next := c
	for _, e := range evs {
		at := e.At.UTC().Truncate(Resolution)
		if !at.Before(closeTo) {
			break
		}
		if at.Before(t) {
			at = t
		}
		accrue(t, at, st)
		t = at
		st.status = e.To
		st.price = vm.PricePerHourCents
		if e.PricePerHourCents != nil {
			st.price = *e.PricePerHourCents
		}
		st.gb = 0
		if e.To == models.VMStopped {
			st.gb = e.StorageGb
		}
		next.LastEventID = e.ID
	}
	if t.Before(closeTo) {
		accrue(t, closeTo, st)
	}
	next.Through = closeTo
	next.Status, next.PricePerHourCents, next.StorageGb = st.status, st.price, st.gb
	next.Done = st.status == models.VMTerminated

	var recs []*models.UsageRecord
	for _, kind := range []models.UsageKind{models.UsageCompute, models.UsageStorage} {
		carry := &next.ComputeCarry
		if kind == models.UsageStorage {
			carry = &next.StorageCarry
		}
		for _, p := range periods[kind] {
			exact := *carry + p.exact
			r := &models.UsageRecord{OrganizationID: c.OrganizationID, VMID: c.VMID, Kind: kind,
				PeriodStart: p.start, PeriodEnd: p.end, Day: p.start.Format(time.DateOnly),
				Milliseconds: p.ms, CostMicroCents: exact / MsPerHour, ClosedAt: closedAt}
			*carry = exact % MsPerHour
			if kind == models.UsageCompute {
				r.GPUModelID, r.GPUCount, r.GPUMilliseconds = vm.GPUModelID, vm.GPUCount, p.ms*int64(vm.GPUCount)
			} else {
				r.StorageGb = st.gb
			}
			recs = append(recs, r)
		}
	}
	return recs, next
}

// newCursor is the cursor of a workload the pass meets for the first
// time: at its first kept event, in the state before it (so the event is
// applied by the pass like any other), or, for a row with no event at all
// (a fixture's, loaded without a history), at closeTo in the row's state
// now: nothing before it is billed.
func newCursor(v store.UnmeteredVM, closeTo time.Time) models.UsageCursor {
	c := models.UsageCursor{VMID: v.ID, OrganizationID: v.OrganizationID, PricePerHourCents: v.PricePerHourCents}
	if e := v.FirstEvent; e != nil {
		c.Through = e.At.UTC().Truncate(Resolution)
		c.LastEventID = e.ID - 1
		c.Status = e.From
		if e.PricePerHourCents != nil {
			c.PricePerHourCents = *e.PricePerHourCents
		}
		return c
	}
	c.Through = closeTo.UTC().Truncate(Resolution)
	c.Status = v.Status
	if v.Status == models.VMStopped {
		c.StorageGb = v.KeptGb
	}
	c.Done = v.Status == models.VMTerminated
	return c
}
