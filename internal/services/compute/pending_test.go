package compute_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/services/compute"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// pendingLimit3 is the refusal of a create past a bound of 3 pending.
const pendingLimit3 = "pending limit is 3 VMs and pods per organization; 3 pending, and no node has room for this one now: wait for one to be placed, or terminate one"

// With a bound of 3, org-a's fourth queued create is refused and writes
// nothing; queue false still answers that nothing has room; a create that
// places now is not counted against it, nor is another organization's
// queue; a pending row terminated makes room again.
func TestCreateBoundsThePendingQueue(t *testing.T) {
	eachFleet(t, func(t *testing.T, st *store.Store, cs *compute.Service) {
		ctx := context.Background()
		cs.MaxPending = 3
		op, b := datasettest.Caller(t, st, "a-op"), datasettest.Caller(t, st, "b-op")
		var full []*models.VM
		for _, n := range []int{4, 3} {
			res, err := cs.Create(ctx, op, vmReq("full", n))
			if err != nil || res.VM.Status != models.VMDeploying {
				t.Fatalf("full: %+v %v", res, err)
			}
			full = append(full, res.VM)
		}
		var queued []*models.VM
		for i := range 3 {
			res, err := cs.Create(ctx, op, vmReq(fmt.Sprintf("waits-%d", i), 2))
			if err != nil || res.VM.Status != models.VMPending {
				t.Fatalf("waits-%d: %+v %v", i, res, err)
			}
			queued = append(queued, res.VM)
		}
		_, err := cs.Create(ctx, op, vmReq("one-more", 2))
		datasettest.WantError(t, err, http.StatusConflict, compute.CodePendingLimitExceeded, pendingLimit3)
		if _, total, err := cs.List(ctx, op, compute.ListQuery{Count: true}); err != nil || total != 5 {
			t.Fatalf("a refused create left a row: %d rows, %v", total, err)
		}
		r := vmReq("now-or-never", 2)
		r.Queue = new(false)
		_, err = cs.Create(ctx, op, r)
		datasettest.WantError(t, err, http.StatusServiceUnavailable, "VM_NO_CAPACITY", "")
		// Another organization queues as before.
		if res, err := cs.Create(ctx, b, vmReq("theirs", 2)); err != nil || res.VM.Status != models.VMPending {
			t.Fatalf("theirs: %+v %v", res, err)
		}
		// A create that places now is not held to the bound.
		if _, err := cs.Terminate(ctx, op, full[1].ID); err != nil {
			t.Fatal(err)
		}
		if res, err := cs.Create(ctx, op, vmReq("fits", 1)); err != nil || res.VM.Status != models.VMDeploying {
			t.Fatalf("fits: %+v %v, want deploying with 3 pending", res, err)
		}
		// A pending row gone makes room for one more.
		if _, err := cs.Terminate(ctx, op, queued[0].ID); err != nil {
			t.Fatal(err)
		}
		if res, err := cs.Create(ctx, op, vmReq("again", 4)); err != nil || res.VM.Status != models.VMPending {
			t.Fatalf("again: %+v %v, want pending", res, err)
		}
		_, err = cs.Create(ctx, op, vmReq("one-more", 4))
		datasettest.WantError(t, err, http.StatusConflict, compute.CodePendingLimitExceeded, pendingLimit3)
	})
}

// Creates racing to queue, from two stores on one database (two replicas'
// pools), never pass the bound: of 12 at once with a bound of 3 and
// nothing free, 3 queue and 9 are refused, each time.
func TestPendingBoundHoldsUnderRacingCreates(t *testing.T) {
	for _, d := range storetest.Engines() {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			sts := storetest.Replicas(t, d, 2)
			datasettest.Load(t, sts[0], createFleet)
			services := []*compute.Service{compute.New(sts[0]), compute.New(sts[1])}
			for _, cs := range services {
				cs.MaxPending = 3
			}
			op := datasettest.Caller(t, sts[0], "a-op")
			for _, n := range []int{4, 3} {
				if _, err := services[0].Create(ctx, op, vmReq("full", n)); err != nil {
					t.Fatal(err)
				}
			}
			for round := range 3 {
				const racers = 12
				var wg sync.WaitGroup
				errs := make([]error, racers)
				ids := make([]string, racers)
				for i := range racers {
					wg.Go(func() {
						res, err := services[i%2].Create(ctx, op, vmReq(fmt.Sprintf("race-%d-%d", round, i), 2))
						if errs[i] = err; err == nil {
							ids[i] = res.VM.ID
						}
					})
				}
				wg.Wait()
				queued := 0
				for i, err := range errs {
					if err == nil {
						queued++
						continue
					}
					if e, ok := apierr.As(err); !ok || e.Status != http.StatusConflict || e.Code != compute.CodePendingLimitExceeded {
						t.Fatalf("round %d, create %d: %v, want queued or 409 %s", round, i, err, compute.CodePendingLimitExceeded)
					}
				}
				if queued != 3 {
					t.Fatalf("round %d: %d of %d racing creates queued under a bound of 3", round, queued, racers)
				}
				for _, id := range ids {
					if id != "" {
						if _, err := services[0].Terminate(ctx, op, id); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
		})
	}
}
