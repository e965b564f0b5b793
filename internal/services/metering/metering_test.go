package metering_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
	"time"

	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/services/metering"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// t0 is the simulated time the tests start at: on an hour.
var t0 = time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)

var user = models.Actor{Kind: models.ActorUser, ID: "key:test"}

// apply applies the transition name to the VM id of org-acme at at,
// through the lifecycle (store.Apply), as the services do.
func apply(t *testing.T, st *store.Store, id string, name models.TransitionName, at time.Time) {
	t.Helper()
	err := st.InTx(context.Background(), func(tx *store.Txn) error {
		vm, err := st.LockVM(tx, "org-acme", id)
		if err != nil {
			return err
		}
		if vm == nil {
			return fmt.Errorf("no vm %s", id)
		}
		_, err = st.Apply(tx, vm, store.Change{Transition: name, Actor: user}, at)
		return err
	})
	if err != nil {
		t.Fatalf("%s %s at %s: %v", name, id, at.Format(time.TimeOnly), err)
	}
}

func setPrice(t *testing.T, st *store.Store, id string, cents int) {
	t.Helper()
	if err := st.DB.Exec("UPDATE vms SET price_per_hour_cents = ? WHERE id = ?", cents, id).Error; err != nil {
		t.Fatal(err)
	}
}

// sums answers a workload's records' milliseconds and cost by kind, and
// fails t when its periods of a kind overlap or cross an hour.
func sums(t *testing.T, st *store.Store, id string) (ms, cost map[models.UsageKind]int64) {
	t.Helper()
	recs, err := st.UsageRecordsOf(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	ms, cost = map[models.UsageKind]int64{}, map[models.UsageKind]int64{}
	last := map[models.UsageKind]time.Time{}
	for _, r := range recs {
		if l, ok := last[r.Kind]; ok && r.PeriodStart.Before(l) {
			t.Errorf("%s %s: period %s–%s overlaps the one before (ends %s)", id, r.Kind, r.PeriodStart, r.PeriodEnd, l)
		}
		if !r.PeriodEnd.After(r.PeriodStart) || r.PeriodEnd.Sub(r.PeriodStart.Truncate(time.Hour)) > time.Hour {
			t.Errorf("%s %s: period %s–%s is empty or crosses an hour", id, r.Kind, r.PeriodStart, r.PeriodEnd)
		}
		if r.Milliseconds > r.PeriodEnd.Sub(r.PeriodStart).Milliseconds() {
			t.Errorf("%s %s: %d ms in a period of %s", id, r.Kind, r.Milliseconds, r.PeriodEnd.Sub(r.PeriodStart))
		}
		last[r.Kind] = r.PeriodEnd
		ms[r.Kind] += r.Milliseconds
		cost[r.Kind] += r.CostMicroCents
	}
	return ms, cost
}

// clock is a simulated clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Set(t time.Time) { c.mu.Lock(); c.now = t; c.mu.Unlock() }

// A VM running exactly 90 s at 249 cents an hour costs 249 × 90 / 3600 =
// 6.225 cents: 6,225,000 micro-cents, exactly. Its 10 s stopped before it
// (its 500 GB disk kept) are storage: 500 × 27,400 µ¢ × 10 / 3600 =
// 38,055.5…, 38,055 µ¢ (rounded down once). Terminated, nothing more.
func TestNinetySecondsAt249CentsAnHour(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		setPrice(t, st, "vm-acme-1", 249)
		apply(t, st, "vm-acme-1", models.UserStop, t0)
		apply(t, st, "vm-acme-1", models.RestartDeploy, t0.Add(10*time.Second))
		apply(t, st, "vm-acme-1", models.AgentRunning, t0.Add(20*time.Second))
		apply(t, st, "vm-acme-1", models.UserTerminate, t0.Add(110*time.Second))
		clk := &clock{now: t0.Add(2 * time.Hour)}
		m := metering.New(st, clk.Now)
		if _, err := m.Pass(ctx); err != nil {
			t.Fatal(err)
		}
		ms, cost := sums(t, st, "vm-acme-1")
		if ms[models.UsageCompute] != 90_000 || cost[models.UsageCompute] != 6_225_000 {
			t.Errorf("compute: %d ms, %d µ¢; want 90000 ms, 6225000 µ¢", ms[models.UsageCompute], cost[models.UsageCompute])
		}
		if ms[models.UsageStorage] != 10_000 || cost[models.UsageStorage] != 38_055 {
			t.Errorf("storage: %d ms, %d µ¢; want 10000 ms, 38055 µ¢", ms[models.UsageStorage], cost[models.UsageStorage])
		}
		// Later passes add nothing to it: terminated accrues none.
		clk.Set(t0.Add(5 * time.Hour))
		if _, err := m.Pass(ctx); err != nil {
			t.Fatal(err)
		}
		if again, _ := sums(t, st, "vm-acme-1"); again[models.UsageCompute] != 90_000 || again[models.UsageStorage] != 10_000 {
			t.Errorf("after a later pass: %v ms", again)
		}
		u, err := m.Usage(ctx, moneyCaller(t, st), "org-acme", t0, t0.Add(time.Hour), "workload")
		if err != nil {
			t.Fatal(err)
		}
		var line *metering.UsageLine
		for i := range u.Lines {
			if u.Lines[i].Key == "vm-acme-1" {
				line = &u.Lines[i]
			}
		}
		if line == nil || line.Milliseconds != 90_000 || line.GPUMilliseconds != 180_000 || line.CostMicroCents != 6_225_000+38_055 {
			t.Errorf("usage by workload: %+v", u.Lines)
		}
	})
}

// An interrupted hour costs nothing: a VM that ran 60 s, was interrupted
// for an hour and ran 60 s more is billed 120 s.
func TestAnInterruptedHourCostsNothing(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		setPrice(t, st, "vm-acme-1", 450)
		apply(t, st, "vm-acme-1", models.UserStop, t0)
		apply(t, st, "vm-acme-1", models.RestartDeploy, t0)
		apply(t, st, "vm-acme-1", models.AgentRunning, t0)
		apply(t, st, "vm-acme-1", models.NodeLost, t0.Add(time.Minute))
		apply(t, st, "vm-acme-1", models.NodeBack, t0.Add(time.Hour+time.Minute))
		apply(t, st, "vm-acme-1", models.UserTerminate, t0.Add(time.Hour+2*time.Minute))
		if _, err := metering.New(st, nil).CloseThrough(context.Background(), t0.Add(3*time.Hour)); err != nil {
			t.Fatal(err)
		}
		ms, cost := sums(t, st, "vm-acme-1")
		if ms[models.UsageCompute] != 120_000 || cost[models.UsageCompute] != 450*1_000_000*120/3600 {
			t.Errorf("compute: %d ms, %d µ¢; want 120000 ms, %d µ¢", ms[models.UsageCompute], cost[models.UsageCompute], 450*1_000_000*120/3600)
		}
		if ms[models.UsageStorage] != 0 {
			t.Errorf("an interrupted or running VM accrued %d ms of storage", ms[models.UsageStorage])
		}
	})
}

// A stopped VM accrues storage only, for its kept disk, hour after hour,
// in periods that never cross an hour; the price of a running VM is the
// one it was restarted with.
func TestAStoppedVMAccruesStorageOnly(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		apply(t, st, "vm-acme-1", models.UserStop, t0.Add(30*time.Minute))
		m := metering.New(st, nil)
		for _, h := range []time.Duration{time.Hour, 2 * time.Hour, 2*time.Hour + 30*time.Minute} {
			if _, err := m.CloseThrough(ctx, t0.Add(h)); err != nil {
				t.Fatal(err)
			}
		}
		ms, cost := sums(t, st, "vm-acme-1")
		if ms[models.UsageCompute] != 0 || ms[models.UsageStorage] != 2*3_600_000 || cost[models.UsageStorage] != 2*500*27_400 {
			t.Errorf("stopped 2 h: %v ms, %v µ¢", ms, cost)
		}
		recs, _ := st.UsageRecordsOf(ctx, "vm-acme-1")
		if len(recs) != 3 || !recs[0].PeriodStart.Equal(t0.Add(30*time.Minute)) || !recs[1].PeriodStart.Equal(t0.Add(time.Hour)) {
			t.Errorf("records: %+v", recs)
		}
		b, err := m.Balance(ctx, moneyCaller(t, st), "org-acme")
		if err != nil {
			t.Fatal(err)
		}
		// Running now: pod-acme-1 (no price in the fixture, 0); stopped:
		// vm-acme-1 (500 GB) and vm-acme-2 (200 GB).
		if b.Prepaid || b.BalanceMicroCents != 0 || b.BurnMicroCentsPerHour != 700*27_400 || b.RunwayHours != nil {
			t.Errorf("balance: %+v", b)
		}
	})
}

// twoReplicas opens two stores on one fresh database holding the base
// fixture, as two server processes would.
func twoReplicas(t *testing.T, d store.Dialect) (*store.Store, *store.Store) {
	raw := storetest.URL(t, d)
	var sts []*store.Store
	for range 2 {
		st, err := store.Open(raw)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		sts = append(sts, st)
	}
	if err := sts[0].Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	datasettest.Load(t, sts[0], datasettest.Base)
	return sts[0], sts[1]
}

// addRunning inserts n running VMs of org-acme on n1 at price cents.
func addRunning(t *testing.T, st *store.Store, n, cents int) []string {
	var ids []string
	node, model := "n1", "h100-80gb"
	for i := range n {
		id := fmt.Sprintf("vm-m-%03d", i)
		vm := models.VM{ID: id, Name: id, OrganizationID: "org-acme", Status: models.VMRunning, NodeID: &node,
			GPUModelID: &model, GPUCount: 1, DiskSizeGb: 100, PricePerHourCents: cents + i, Generation: 1, Action: models.ActionRun}
		if err := st.DB.Create(&vm).Error; err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// Two replicas metering the same hour at once, each in many small passes
// at its own times, record every second of it exactly once.
func TestTwoReplicasRecordEverySecondOnce(t *testing.T) {
	for _, d := range storetest.Engines() {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			a, b := twoReplicas(t, d)
			ids := addRunning(t, a, 40, 249)
			// The rows have no history: metering starts at the first pass.
			if _, err := metering.New(a, nil).CloseThrough(ctx, t0); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			errs := make(chan error, 2)
			for i, st := range []*store.Store{a, b} {
				m := metering.New(st, nil)
				m.Batch = 7
				rng := rand.New(rand.NewPCG(uint64(i), 1))
				wg.Add(1)
				go func() {
					defer wg.Done()
					at := t0
					for at.Before(t0.Add(time.Hour)) {
						at = at.Add(time.Duration(rng.IntN(600_000)) * time.Millisecond)
						if at.After(t0.Add(time.Hour)) {
							at = t0.Add(time.Hour)
						}
						if _, err := m.CloseThrough(ctx, at); err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			for i, id := range ids {
				ms, cost := sums(t, a, id)
				price := int64(249 + i)
				if ms[models.UsageCompute] != 3_600_000 || cost[models.UsageCompute] != price*1_000_000 {
					t.Errorf("%s: %d ms, %d µ¢ for the hour; want 3600000 ms, %d µ¢", id, ms[models.UsageCompute], cost[models.UsageCompute], price*1_000_000)
				}
			}
		})
	}
}

// A pass cancelled after its first batch leaves the batches it committed
// closed and the others as they were: the next pass closes them, with no
// gap and no double.
func TestACancelledPassLeavesNoGapAndNoDouble(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		ids := addRunning(t, st, 10, 100)
		m := metering.New(st, nil)
		if _, err := m.CloseThrough(context.Background(), t0); err != nil {
			t.Fatal(err)
		}
		m.Batch = 3
		ctx, cancel := context.WithCancel(context.Background())
		batches := 0
		metering.OnBatch(m, func(metering.Result) {
			// The fixture's rows are the first batch; one of these the second.
			if batches++; batches == 2 {
				cancel()
			}
		})
		if _, err := m.CloseThrough(ctx, t0.Add(40*time.Minute)); err == nil {
			t.Fatal("a cancelled pass answered no error")
		}
		closed := 0
		for _, id := range ids {
			if ms, _ := sums(t, st, id); ms[models.UsageCompute] > 0 {
				closed++
			}
		}
		if closed == 0 || closed == len(ids) {
			t.Fatalf("the cancelled pass closed %d of %d workloads; want some, not all", closed, len(ids))
		}
		metering.OnBatch(m, nil)
		if _, err := m.CloseThrough(context.Background(), t0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		for i, id := range ids {
			ms, cost := sums(t, st, id)
			if ms[models.UsageCompute] != 3_600_000 || cost[models.UsageCompute] != int64(100+i)*1_000_000 {
				t.Errorf("%s: %d ms, %d µ¢", id, ms[models.UsageCompute], cost[models.UsageCompute])
			}
		}
	})
}

// transition is one step of a random lifecycle as the test saw it.
type transition struct {
	at     time.Time
	to     models.VMStatus
	price  int
	keptGb int
}

// expected computes a workload's bill from its transitions alone: running
// time at the price it entered (or was restarted in) running with,
// stopped time × the disk it kept × the catalog's storage price; the exact
// sum, rounded down to the micro-cent once.
func expected(ts []transition, end time.Time, storagePrice int64) (computeMs, computeCost, storageMs, storageCost int64) {
	var cExact, sExact int64
	for i, tr := range ts {
		next := end
		if i+1 < len(ts) {
			next = ts[i+1].at
		}
		ms := next.Sub(tr.at).Milliseconds()
		switch tr.to {
		case models.VMRunning:
			computeMs += ms
			cExact += int64(tr.price) * 1_000_000 * ms
		case models.VMStopped:
			if tr.keptGb > 0 {
				storageMs += ms
				sExact += int64(tr.keptGb) * storagePrice * ms
			}
		}
	}
	return computeMs, cExact / 3_600_000, storageMs, sExact / 3_600_000
}

// candidates are the transitions a random lifecycle picks from; Apply's
// own table says which apply to the row as it stands.
var candidates = []models.TransitionName{models.UserStop, models.UserTerminate, models.RestartDeploy, models.RestartReboot,
	models.AgentRunning, models.AgentFailedStart, models.NodeLost, models.NodeBack, models.ExpireVM, models.VMExited}

// Random lifecycles, metered by passes at random times (two replicas'
// services taking turns, one cancelled now and then), are billed exactly
// what their transitions say.
func TestRandomLifecyclesAreBilledWhatTheirTransitionsSay(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		ids := addRunning(t, st, 6, 137)
		rng := rand.New(rand.NewPCG(35, 42))
		m := metering.New(st, nil)
		m.Batch = 2
		if _, err := m.CloseThrough(ctx, t0); err != nil {
			t.Fatal(err)
		}
		price, err := st.StoragePriceNow(ctx)
		if err != nil {
			t.Fatal(err)
		}
		history := map[string][]transition{}
		for i, id := range ids {
			history[id] = []transition{{at: t0, to: models.VMRunning, price: 137 + i}}
		}
		at, passed := t0, t0
		for step := 0; step < 120; step++ {
			at = at.Add(time.Duration(rng.IntN(20*60_000)+1) * time.Millisecond * 7)
			id := ids[rng.IntN(len(ids))]
			var vm models.VM
			if err := st.DB.Take(&vm, "id = ?", id).Error; err != nil {
				t.Fatal(err)
			}
			var allowed []models.TransitionName
			for _, c := range candidates {
				if c == models.UserTerminate && rng.IntN(8) != 0 {
					continue // rarely: it ends the lifecycle
				}
				if models.Step(c).Allows(&vm) {
					allowed = append(allowed, c)
				}
			}
			if len(allowed) == 0 {
				continue // terminated
			}
			name := allowed[rng.IntN(len(allowed))]
			if name == models.RestartDeploy || name == models.RestartReboot {
				// A restart may come at a new price: the one billed from it.
				setPrice(t, st, id, 100+rng.IntN(400))
			}
			apply(t, st, id, name, at)
			if err := st.DB.Take(&vm, "id = ?", id).Error; err != nil {
				t.Fatal(err)
			}
			var kept int
			st.DB.Raw("SELECT COALESCE(SUM(size_gb), 0) FROM volumes WHERE vm_id = ? AND deleted_at IS NULL", id).Scan(&kept)
			history[id] = append(history[id], transition{at: at, to: vm.Status, price: vm.PricePerHourCents, keptGb: kept})
			if rng.IntN(4) == 0 {
				// A pass at a random time since the last one, now and then
				// cancelled after its first batch.
				passed = passed.Add(time.Duration(rng.Int64N(int64(at.Sub(passed)) + 1)))
				pctx, cancel := context.WithCancel(ctx)
				if rng.IntN(3) == 0 {
					metering.OnBatch(m, func(metering.Result) { cancel() })
				}
				_, _ = m.CloseThrough(pctx, passed)
				cancel()
				metering.OnBatch(m, nil)
			}
		}
		end := at.Add(time.Hour)
		if _, err := m.CloseThrough(ctx, end); err != nil {
			t.Fatal(err)
		}
		sort.Strings(ids)
		var allCompute, allStorage int64
		for _, id := range ids {
			cms, ccost, sms, scost := expected(history[id], end, price)
			allCompute, allStorage = allCompute+cms, allStorage+sms
			ms, cost := sums(t, st, id)
			if ms[models.UsageCompute] != cms || cost[models.UsageCompute] != ccost ||
				ms[models.UsageStorage] != sms || cost[models.UsageStorage] != scost {
				t.Errorf("%s: billed compute %d ms %d µ¢, storage %d ms %d µ¢; its transitions say %d ms %d µ¢, %d ms %d µ¢ (%d transitions)",
					id, ms[models.UsageCompute], cost[models.UsageCompute], ms[models.UsageStorage], cost[models.UsageStorage],
					cms, ccost, sms, scost, len(history[id]))
			}
		}
		if allCompute == 0 || allStorage == 0 {
			t.Errorf("the lifecycles ran %d ms and kept storage %d ms: the test meters too little", allCompute, allStorage)
		}
	})
}

// The runner passes on its own every interval, at its service's clock
// less the settling time.
func TestTheRunnerPassesEveryInterval(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		clk := &clock{now: t0}
		m := metering.New(st, clk.Now)
		m.Settle = 0
		if _, err := m.Pass(context.Background()); err != nil {
			t.Fatal(err)
		}
		clk.Set(t0.Add(time.Hour))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { metering.NewRunner(m, 10*time.Millisecond).Run(ctx); close(done) }()
		defer func() { cancel(); <-done }()
		deadline := time.Now().Add(10 * time.Second)
		for {
			ms, _ := sums(t, st, "vm-acme-1")
			if ms[models.UsageCompute] == 3_600_000 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("after 10 s the runner closed %d ms of vm-acme-1's hour", ms[models.UsageCompute])
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}
