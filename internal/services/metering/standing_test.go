package metering_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"gpugraph/internal/auth"
	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/services/compute"
	"gpugraph/internal/services/metering"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// acmeBurn is what org-acme's fixture runs costs an hour: vm-acme-1 at
// 450 ¢/h, pod-acme-1 at 0, vm-acme-2 stopped keeping 200 GB.
const acmeBurn = 450*1_000_000 + 200*27_400

// ranOut answers the events of the organization's workloads made by the
// balance-ran-out transition, by workload.
func ranOut(t *testing.T, st *store.Store, orgID string) map[string][]models.VMEvent {
	t.Helper()
	var evs []models.VMEvent
	if err := st.DB.Where("organization_id = ? AND transition = ?", orgID, models.BalanceRanOut).Order("id").Find(&evs).Error; err != nil {
		t.Fatal(err)
	}
	out := map[string][]models.VMEvent{}
	for _, e := range evs {
		out[e.VMID] = append(out[e.VMID], e)
	}
	return out
}

func vmRow(t *testing.T, st *store.Store, id string) (*models.VM, error) {
	t.Helper()
	var vm models.VM
	err := st.DB.Unscoped().Where("id = ?", id).Take(&vm).Error
	return &vm, err
}

func orgState(t *testing.T, st *store.Store, id string) models.OrgState {
	t.Helper()
	var o models.Organization
	if err := st.DB.Where("id = ?", id).Take(&o).Error; err != nil {
		t.Fatal(err)
	}
	return o.State
}

func billingEvents(t *testing.T, st *store.Store, orgID string) []models.BillingEvent {
	t.Helper()
	evs, err := st.BillingEvents(context.Background(), orgID, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// A prepaid balance that no longer covers the next metering period of
// what the organization runs stops every running, deploying and
// interrupted workload of it with auto_stopped_insufficient_balance (in
// the event log, by the metering pass), and the organization answers 402
// ORGANIZATION_BALANCE_EXHAUSTED to a restart; a credit that covers it
// again makes it active (what stopped stays stopped) and the restart
// then succeeds.
func TestABalanceThatRunsOutStopsTheOrganization(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		clk := &clock{now: t0.Add(metering.DefaultSettle)}
		m := metering.New(st, clk.Now)
		m.Interval = time.Minute
		op := auth.SystemCaller()
		if _, err := m.CloseThrough(ctx, t0); err != nil { // the fixture's rows start here
			t.Fatal(err)
		}
		// 10 cents: a minute of acmeBurn is 7,591,333.3 µ¢.
		if _, err := m.Grant(ctx, op, "org-acme", 10, "a little", "g1"); err != nil {
			t.Fatal(err)
		}
		res, err := m.Pass(ctx)
		if err != nil || res.Exhausted != 0 || orgState(t, st, "org-acme") != models.OrgStateActive {
			t.Fatalf("a balance that covers the next minute: %+v %v, %s", res, err, orgState(t, st, "org-acme"))
		}
		clk.Set(t0.Add(time.Minute + metering.DefaultSettle))
		res, err = m.Pass(ctx)
		if err != nil || res.Exhausted != 1 || res.Stopped != 2 {
			t.Fatalf("the pass after a minute's debit: %+v %v; want org-acme exhausted, 2 stopped", res, err)
		}
		bal, _, _ := st.LedgerBalance(ctx, "org-acme")
		if want := int64(10_000_000 - acmeBurn/60); bal != want {
			t.Errorf("balance %d µ¢; want %d", bal, want)
		}
		if s := orgState(t, st, "org-acme"); s != models.OrgStateBalanceExhausted {
			t.Errorf("org-acme is %s; want balance_exhausted", s)
		}
		evs := ranOut(t, st, "org-acme")
		for _, id := range []string{"vm-acme-1", "pod-acme-1"} {
			e := evs[id]
			if len(e) != 1 || e[0].From != models.VMRunning || e[0].To != models.VMStopped ||
				e[0].Reason != models.ReasonInsufficientBalance || e[0].ActorKind != models.ActorPlatform ||
				e[0].ActorID != "metering" || !e[0].At.Equal(t0.Add(time.Minute+metering.DefaultSettle)) {
				t.Errorf("%s's events of balance-ran-out: %+v", id, e)
			}
			vm, err := vmRow(t, st, id)
			if err != nil || vm.Status != models.VMStopped || vm.StatusReason != models.ReasonInsufficientBalance {
				t.Errorf("%s: %+v %v", id, vm, err)
			}
		}
		if len(evs) != 2 {
			t.Errorf("balance-ran-out events: %v; want vm-acme-1's and pod-acme-1's", evs)
		}
		if be := billingEvents(t, st, "org-acme"); len(be) != 1 || be[0].Kind != models.BillingBalanceExhausted || be[0].Stopped != 2 {
			t.Errorf("billing events: %+v", be)
		}
		// A later pass stops nothing more, and org-globex (postpaid) runs on.
		clk.Set(t0.Add(2*time.Minute + metering.DefaultSettle))
		if res, err := m.Pass(ctx); err != nil || res.Exhausted != 0 || len(ranOut(t, st, "org-acme")) != 2 {
			t.Errorf("a later pass: %+v %v", res, err)
		}
		if s := orgState(t, st, "org-globex"); s != models.OrgStateActive || len(ranOut(t, st, "org-globex")) != 0 {
			t.Errorf("postpaid org-globex: %s", s)
		}

		cs := compute.New(st)
		owner := datasettest.Caller(t, st, "acme-operator")
		_, err = cs.Restart(ctx, owner, "vm-acme-1")
		if e, ok := apierr.As(err); !ok || e.Status != http.StatusPaymentRequired || e.Code != auth.CodeOrganizationBalanceExhausted {
			t.Fatalf("a restart of an exhausted organization: %v; want 402 %s", err, auth.CodeOrganizationBalanceExhausted)
		}
		// A credit that covers the next period again makes it active; what
		// stopped stays stopped until its owner restarts it.
		if _, err := m.Grant(ctx, op, "org-acme", 1000, "top-up", "g2"); err != nil {
			t.Fatal(err)
		}
		if s := orgState(t, st, "org-acme"); s != models.OrgStateActive {
			t.Fatalf("after the top-up org-acme is %s; want active", s)
		}
		if vm, _ := vmRow(t, st, "vm-acme-1"); vm.Status != models.VMStopped {
			t.Errorf("vm-acme-1 is %s after the top-up; want stopped", vm.Status)
		}
		if be := billingEvents(t, st, "org-acme"); len(be) != 2 || be[1].Kind != models.BillingBalanceRestored {
			t.Errorf("billing events after the top-up: %+v", be)
		}
		if r, err := cs.Restart(ctx, owner, "vm-acme-1"); err != nil || r.VM.Status != models.VMDeploying {
			t.Errorf("the restart after the top-up: %+v %v", r, err)
		}
	})
}

// A credit too small to cover the next period leaves the organization
// exhausted.
func TestACreditThatDoesNotCoverLeavesItExhausted(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		clk := &clock{now: t0.Add(metering.DefaultSettle)}
		m := metering.New(st, clk.Now)
		op := auth.SystemCaller()
		if _, err := m.CloseThrough(ctx, t0); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Grant(ctx, op, "org-acme", 1, "a cent", "g1"); err != nil {
			t.Fatal(err)
		}
		if res, err := m.Pass(ctx); err != nil || res.Exhausted != 1 {
			t.Fatalf("%+v %v", res, err)
		}
		// Stopped now, it burns vm-acme-1's 500 GB and vm-acme-2's 200 GB:
		// 700 × 27,400 µ¢ an hour, 319,666.7 µ¢ a minute; a cent is 1,000,000
		// and the balance is 1 cent already, so one more cent covers it.
		if _, err := m.Adjust(ctx, op, "org-acme", -2, "correction", "a1"); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Grant(ctx, op, "org-acme", 1, "a cent more", "g2"); err != nil {
			t.Fatal(err)
		}
		if s := orgState(t, st, "org-acme"); s != models.OrgStateBalanceExhausted {
			t.Errorf("a balance of 0 after the credit: org-acme is %s; want balance_exhausted", s)
		}
		if _, err := m.Grant(ctx, op, "org-acme", 1, "one more", "g3"); err != nil {
			t.Fatal(err)
		}
		if s := orgState(t, st, "org-acme"); s != models.OrgStateActive {
			t.Errorf("a balance of a cent, covering a minute of storage: org-acme is %s; want active", s)
		}
	})
}

// The low-balance threshold raises one event when the runway at the burn
// rate crosses below it, not one a pass; rising back above it (a credit)
// re-arms it, and the next crossing raises one more.
func TestTheLowBalanceEventIsRaisedOncePerCrossing(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		clk := &clock{now: t0.Add(metering.DefaultSettle)}
		m := metering.New(st, clk.Now)
		op := auth.SystemCaller()
		if _, err := m.CloseThrough(ctx, t0); err != nil {
			t.Fatal(err)
		}
		two := 2
		// compute.operate runs workloads and sets no money's rules: its
		// organization's admin does, or the operator.
		for _, token := range []string{"acme-reader", "acme-operator"} {
			if _, err := m.SetLowBalanceThreshold(ctx, datasettest.Caller(t, st, token), "org-acme", &two); err == nil {
				t.Errorf("%s set the threshold", token)
			}
		}
		bad := 0
		if _, err := m.SetLowBalanceThreshold(ctx, op, "org-acme", &bad); err == nil {
			t.Error("a threshold of 0 hours was taken")
		}
		if _, err := m.SetLowBalanceThreshold(ctx, op, "org-acme", &two); err != nil {
			t.Fatal(err)
		}
		// 1,000 cents at acmeBurn: 2.195 hours of runway.
		if _, err := m.Grant(ctx, op, "org-acme", 1000, "start", "g1"); err != nil {
			t.Fatal(err)
		}
		lows := func() int {
			n := 0
			for _, e := range billingEvents(t, st, "org-acme") {
				if e.Kind == models.BillingLowBalance {
					n++
				}
			}
			return n
		}
		pass := func(at time.Duration) metering.Result {
			t.Helper()
			clk.Set(t0.Add(at + metering.DefaultSettle))
			res, err := m.Pass(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
		if res := pass(0); res.LowBalance != 0 || lows() != 0 {
			t.Fatalf("2.2 hours of runway over a threshold of 2: %+v", res)
		}
		// 15 minutes later: 886,130,000 µ¢ left, 1.95 hours.
		if res := pass(15 * time.Minute); res.LowBalance != 1 || lows() != 1 {
			t.Fatalf("below the threshold: %+v, %d events", res, lows())
		}
		for _, at := range []time.Duration{16 * time.Minute, 20 * time.Minute, 30 * time.Minute} {
			if res := pass(at); res.LowBalance != 0 || lows() != 1 {
				t.Fatalf("still below at %s: %+v, %d events", at, res, lows())
			}
		}
		e := billingEvents(t, st, "org-acme")[0]
		if e.ThresholdHours == nil || *e.ThresholdHours != 2 || e.BurnMicroCentsPerHour != acmeBurn ||
			e.BalanceMicroCents != 1000*1_000_000-acmeBurn/4 || !e.At.Equal(t0.Add(15*time.Minute+metering.DefaultSettle)) {
			t.Errorf("the event: %+v", e)
		}
		// A credit lifts the runway back over 2 hours: no event, re-armed.
		if _, err := m.Grant(ctx, op, "org-acme", 500, "more", "g2"); err != nil {
			t.Fatal(err)
		}
		if res := pass(31 * time.Minute); res.LowBalance != 0 || lows() != 1 {
			t.Fatalf("back above: %+v, %d events", res, lows())
		}
		// 1,500 cents less 31 minutes: below 2 hours again after about 1 h 20.
		if res := pass(80 * time.Minute); res.LowBalance != 1 || lows() != 2 {
			t.Fatalf("the second crossing: %+v, %d events", res, lows())
		}
		if s := orgState(t, st, "org-acme"); s != models.OrgStateActive {
			t.Errorf("org-acme is %s; a low runway stops nothing", s)
		}
	})
}

// Two replicas' passes racing over an organization whose balance ran out
// stop each of its workloads exactly once and raise one event.
func TestTwoReplicasStopEachWorkloadOnce(t *testing.T) {
	for _, d := range storetest.Engines() {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			a, b := twoReplicas(t, d)
			ids := addRunning(t, a, 30, 100)
			clk := &clock{now: t0.Add(metering.DefaultSettle)}
			if _, err := metering.New(a, clk.Now).CloseThrough(ctx, t0); err != nil {
				t.Fatal(err)
			}
			if _, err := metering.New(a, clk.Now).Grant(ctx, auth.SystemCaller(), "org-acme", 100, "a little", "g1"); err != nil {
				t.Fatal(err)
			}
			clk.Set(t0.Add(10*time.Minute + metering.DefaultSettle))
			var wg sync.WaitGroup
			results := make([]metering.Result, 4)
			errs := make([]error, 4)
			for i := range results {
				st := a
				if i%2 == 1 {
					st = b
				}
				m := metering.New(st, clk.Now)
				m.Batch = 7
				wg.Add(1)
				go func() {
					defer wg.Done()
					results[i], errs[i] = m.Pass(ctx)
				}()
			}
			wg.Wait()
			exhausted, stopped := 0, int64(0)
			for i, err := range errs {
				if err != nil {
					t.Fatalf("pass %d: %v", i, err)
				}
				exhausted += results[i].Exhausted
				stopped += results[i].Stopped
			}
			evs := ranOut(t, a, "org-acme")
			for _, id := range append(ids, "vm-acme-1", "pod-acme-1") {
				if len(evs[id]) != 1 {
					t.Errorf("%s: stopped %d times", id, len(evs[id]))
				}
			}
			if exhausted != 1 || stopped != int64(len(ids)+2) || len(evs) != len(ids)+2 {
				t.Errorf("the passes exhausted %d organizations and stopped %d workloads (%d in the log); want 1 and %d",
					exhausted, stopped, len(evs), len(ids)+2)
			}
			if be := billingEvents(t, a, "org-acme"); len(be) != 1 {
				t.Errorf("billing events: %+v", be)
			}
		})
	}
}
