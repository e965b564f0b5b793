package scheduler_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"gpugraph/internal/auth"
	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/lib/paging"
	"gpugraph/internal/services/compute"
	"gpugraph/internal/services/scheduler"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// queueFleet: one online node of 4 H100 GPUs; organizations a and b.
const queueFleet = `{
 "gpuModels": [{"id": "h100", "name": "NVIDIA H100", "manufacturer": "NVIDIA", "memoryGb": 80}],
 "nodes": [{"id": "n1", "name": "node-1", "clusterId": "c1", "nodePool": "p1", "status": "online", "agentVersion": "2.6.1",
   "cpuCores": 64, "ramGb": 512, "diskGb": 4000, "gpus": [
    {"id": "g0", "index": 0, "uuid": "GPU-0", "address": "0000:18:00.0", "modelId": "h100", "health": "healthy"},
    {"id": "g1", "index": 1, "uuid": "GPU-1", "address": "0000:2A:00.0", "modelId": "h100", "health": "healthy"},
    {"id": "g2", "index": 2, "uuid": "GPU-2", "address": "0000:3A:00.0", "modelId": "h100", "health": "healthy"},
    {"id": "g3", "index": 3, "uuid": "GPU-3", "address": "0000:5D:00.0", "modelId": "h100", "health": "healthy"}]}],
 "organizations": [{"id": "org-a", "name": "A", "tenantId": 1}, {"id": "org-b", "name": "B", "tenantId": 2}],
 "apiKeys": [{"token": "a-op", "organizationId": "org-a", "permissions": ["compute.operate"]},
             {"token": "b-op", "organizationId": "org-b", "permissions": ["compute.operate"]}]
}`

type world struct {
	st     *store.Store
	cs     *compute.Service
	sched  *scheduler.Service
	a, b   *auth.Caller
	ctx    context.Context
	t      *testing.T
	prefix string
}

func each(t *testing.T, fn func(w *world)) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		datasettest.Load(t, st, queueFleet)
		cs := compute.New(st)
		fn(&world{st: st, cs: cs, sched: scheduler.New(st, cs), a: datasettest.Caller(t, st, "a-op"),
			b: datasettest.Caller(t, st, "b-op"), ctx: context.Background(), t: t})
	})
}

// create makes a VM of n GPUs for c, at the given priority.
func (w *world) create(c *auth.Caller, name string, n, priority int) *models.VM {
	w.t.Helper()
	res, err := w.cs.Create(w.ctx, c, compute.CreateRequest{Name: name, GPUModelID: new("h100"), GPUCount: new(n),
		CPUCores: new(1), RAMGb: new(1), DiskSizeGb: new(1), Priority: new(priority)})
	if err != nil {
		w.t.Fatal(err)
	}
	return res.VM
}

func (w *world) get(c *auth.Caller, id string) *models.VM {
	w.t.Helper()
	res, err := w.cs.Get(w.ctx, c, id)
	if err != nil {
		w.t.Fatal(err)
	}
	return res.VM
}

func (w *world) pass() scheduler.Result {
	w.t.Helper()
	res, err := w.sched.Pass(w.ctx)
	if err != nil {
		w.t.Fatal(err)
	}
	return res
}

func (w *world) stop(c *auth.Caller, id string) {
	w.t.Helper()
	if _, err := w.cs.Stop(w.ctx, c, id); err != nil {
		w.t.Fatal(err)
	}
}

// Within one organization: priority first, then arrival.
func TestPassPlacesInPriorityThenArrivalOrder(t *testing.T) {
	each(t, func(w *world) {
		full := w.create(w.a, "full", 4, 0)
		first := w.create(w.a, "first", 2, 0)
		second := w.create(w.a, "second", 2, 0)
		urgent := w.create(w.a, "urgent", 2, 10)
		for _, v := range []*models.VM{first, second, urgent} {
			if v.Status != models.VMPending {
				t.Fatalf("%s is %s", v.Name, v.Status)
			}
		}
		if r := w.pass(); r.Placed != 0 || r.Read != 3 {
			t.Fatalf("a pass with no room: %+v", r)
		}
		for name, want := range map[string]int{urgent.ID: 1, first.ID: 2, second.ID: 3} {
			if pos, _ := w.cs.QueuePosition(w.ctx, w.a, w.get(w.a, name)); pos == nil || *pos != want {
				t.Errorf("%s: queue position %v, want %d", name, pos, want)
			}
		}
		w.stop(w.a, full.ID)
		if r := w.pass(); r.Placed != 2 {
			t.Fatalf("placed %d, want 2", r.Placed)
		}
		if got := w.get(w.a, urgent.ID); got.Status != models.VMDeploying || got.StatusReason != "" || got.ProvisioningStage != "scheduled" {
			t.Errorf("urgent: %s %q %s", got.Status, got.StatusReason, got.ProvisioningStage)
		}
		if got := w.get(w.a, first.ID); got.Status != models.VMDeploying {
			t.Errorf("first: %s", got.Status)
		}
		if got := w.get(w.a, second.ID); got.Status != models.VMPending {
			t.Errorf("second: %s, want still pending", got.Status)
		}
		evs, _, err := w.cs.EventPage(w.ctx, w.a, urgent.ID, compute.EventQuery{Limit: 10})
		if err != nil || len(evs) != 2 || evs[1].Transition != models.QueuePlaced || evs[1].ActorKind != models.ActorScheduler ||
			evs[1].From != models.VMPending || evs[1].To != models.VMDeploying {
			t.Errorf("events: %+v %v", evs, err)
		}
		if pos, _ := w.cs.QueuePosition(w.ctx, w.a, w.get(w.a, second.ID)); pos == nil || *pos != 1 {
			t.Errorf("second moved up to %v, want 1", pos)
		}
	})
}

// Round robin: organization a's many pending VMs do not starve b's one,
// queued after them all.
func TestPassIsFairAcrossOrganizations(t *testing.T) {
	each(t, func(w *world) {
		full := w.create(w.a, "full", 4, 0)
		var mine []*models.VM
		for i := range 6 {
			mine = append(mine, w.create(w.a, fmt.Sprintf("a-%d", i), 2, 100))
		}
		theirs := w.create(w.b, "b-0", 2, 0)
		w.stop(w.a, full.ID)
		if r := w.pass(); r.Placed != 2 {
			t.Fatalf("placed %d, want 2", r.Placed)
		}
		if got := w.get(w.b, theirs.ID); got.Status != models.VMDeploying {
			t.Errorf("b's one VM is %s behind a's six: starved", got.Status)
		}
		if got := w.get(w.a, mine[0].ID); got.Status != models.VMDeploying {
			t.Errorf("a's head is %s", got.Status)
		}
		for _, v := range mine[1:] {
			if got := w.get(w.a, v.ID); got.Status != models.VMPending {
				t.Errorf("%s is %s", v.Name, got.Status)
			}
		}
	})
}

// Rounds follow the organizations' turn: never served first (by their
// heads' arrival, no createdAt last), then least recently served; priority
// orders each organization's own queue (as the store reads it) and never
// moves one organization ahead of another.
func TestFairInterleavesRoundsInTurn(t *testing.T) {
	at := func(s int) *time.Time { v := time.Unix(int64(s), 0); return &v }
	rows := []models.VM{
		{ID: "a1", OrganizationID: "a", Priority: 5, CreatedAt: at(1)}, {ID: "a2", OrganizationID: "a", CreatedAt: at(2)},
		{ID: "a3", OrganizationID: "a", CreatedAt: at(3)},
		{ID: "b1", OrganizationID: "b", Priority: 1000, CreatedAt: at(9)}, {ID: "b2", OrganizationID: "b", CreatedAt: at(1)},
		{ID: "c1", OrganizationID: "c", CreatedAt: nil},
		{ID: "d1", OrganizationID: "d", CreatedAt: at(5)}, {ID: "d2", OrganizationID: "d", CreatedAt: at(6)},
	}
	for _, c := range []struct {
		turns map[string]int64
		want  []string
	}{
		// None served yet: by their heads' arrival (b's head, priority
		// 1000, arrived at 9: after a's and d's).
		{nil, []string{"a1", "d1", "b1", "c1", "a2", "d2", "b2", "a3"}},
		// a and b served, b longest ago; c and d never, d's head first.
		{map[string]int64{"a": 7, "b": 3}, []string{"d1", "c1", "b1", "a1", "d2", "b2", "a2", "a3"}},
		// Only b never served; d's turn before a's.
		{map[string]int64{"a": 7, "c": 2, "d": 5}, []string{"b1", "c1", "d1", "a1", "b2", "d2", "a2", "a3"}},
	} {
		var got []string
		for _, v := range scheduler.Fair(rows, c.turns) {
			got = append(got, v.ID)
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("Fair with turns %v = %v, want %v", c.turns, got, c.want)
		}
	}
}

// One organization (a) fills the model; b queues one VM, then a queues
// five at priority 1000. Slots freed one at a time go to each organization
// in turn — b's one first (neither served yet, b's head arrived first),
// then a's, then b's next (queued last, at priority 0), then a's — however
// high a's priority. The passes alternate between two schedulers on one
// database, as two replicas would: the turn is read from the database.
func TestFreedSlotsRotateAcrossOrganizations(t *testing.T) {
	each(t, func(w *world) {
		var fill []*models.VM
		for i := range 4 {
			fill = append(fill, w.create(w.a, fmt.Sprintf("fill-%d", i), 1, 0))
		}
		y := w.create(w.b, "y", 1, 0)
		var xs []*models.VM
		for i := range 5 {
			xs = append(xs, w.create(w.a, fmt.Sprintf("x-%d", i), 1, 1000))
		}
		if y.Status != models.VMPending || xs[4].Status != models.VMPending {
			w.t.Fatalf("y %s, x-4 %s: want both pending", y.Status, xs[4].Status)
		}
		replicas := []*scheduler.Service{scheduler.New(w.st, compute.New(w.st)), scheduler.New(w.st, compute.New(w.st))}
		var y2 *models.VM
		placed := func(c *auth.Caller, v *models.VM) bool { return w.get(c, v.ID).Status == models.VMDeploying }
		for i, want := range []struct {
			c  *auth.Caller
			vm func() *models.VM
		}{{w.b, func() *models.VM { return y }}, {w.a, func() *models.VM { return xs[0] }},
			{w.b, func() *models.VM { return y2 }}, {w.a, func() *models.VM { return xs[1] }}} {
			w.stop(w.a, fill[i].ID)
			res, err := replicas[i%2].Pass(w.ctx)
			if err != nil || res.Placed != 1 {
				w.t.Fatalf("free %d: placed %d, %v; want 1", i+1, res.Placed, err)
			}
			if v := want.vm(); !placed(want.c, v) {
				w.t.Fatalf("free %d: %s is %s, want it placed (its organization's turn)", i+1, v.Name, w.get(want.c, v.ID).Status)
			}
			if i == 0 {
				// b queues again, last and at priority 0.
				y2 = w.create(w.b, "y-2", 1, 0)
			}
		}
		for _, v := range xs[2:] {
			if got := w.get(w.a, v.ID); got.Status != models.VMPending {
				w.t.Errorf("%s is %s, want pending", v.Name, got.Status)
			}
		}
		// Four queue placements: b 1, a 2, b 3, a 4; only a has rows left.
		turns, err := w.st.QueueTurns(w.ctx)
		if err != nil || fmt.Sprint(turns) != "map[org-a:4]" {
			w.t.Errorf("turns %v, %v; want map[org-a:4]", turns, err)
		}
	})
}

func TestPendingTimeout(t *testing.T) {
	each(t, func(w *world) {
		w.create(w.a, "full", 4, 0)
		waits := w.create(w.a, "waits", 1, 0)
		n, err := w.sched.TimeOut(w.ctx, store.Now(), time.Hour)
		if err != nil || n != 0 {
			t.Fatalf("timed out %d early (%v)", n, err)
		}
		n, err = w.sched.TimeOut(w.ctx, store.Now().Add(2*time.Hour), time.Hour)
		if err != nil || n != 1 {
			t.Fatalf("timed out %d, %v; want 1", n, err)
		}
		got := w.get(w.a, waits.ID)
		want := "pending timeout: waited longer than 1h0m0s (--pending-timeout) for a node with room"
		if got.Status != models.VMFailed || got.StatusReason != want {
			t.Errorf("%s %q, want failed %q", got.Status, got.StatusReason, want)
		}
		evs, _, _ := w.cs.EventPage(w.ctx, w.a, waits.ID, compute.EventQuery{Limit: 10})
		if len(evs) != 2 || evs[1].Transition != models.QueueTimeout || evs[1].ActorKind != models.ActorScheduler {
			t.Errorf("events %+v", evs)
		}
	})
}

// Passes at once (replicas) place each pending VM exactly once, and never
// one GPU twice.
func TestConcurrentPassesPlaceOnce(t *testing.T) {
	each(t, func(w *world) {
		full := w.create(w.a, "full", 4, 0)
		for i := range 8 {
			w.create(w.a, fmt.Sprintf("a-%d", i), 1, 0)
			w.create(w.b, fmt.Sprintf("b-%d", i), 1, 0)
		}
		w.stop(w.a, full.ID)
		var wg sync.WaitGroup
		placed := make([]int, 4)
		for i := range placed {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := w.sched.Pass(w.ctx)
				if err != nil {
					t.Error(err)
				}
				placed[i] = res.Placed
			}()
		}
		wg.Wait()
		total := 0
		for _, n := range placed {
			total += n
		}
		if total != 4 {
			t.Errorf("passes placed %v, %d in all; want 4 (one per GPU)", placed, total)
		}
		holders := map[string]string{}
		vms, _, err := w.cs.List(w.ctx, w.a, compute.ListQuery{Statuses: []models.VMStatus{models.VMDeploying}, Page: paging.Page{Limit: 100}})
		if err != nil {
			t.Fatal(err)
		}
		more, _, err := w.cs.List(w.ctx, w.b, compute.ListQuery{Statuses: []models.VMStatus{models.VMDeploying}, Page: paging.Page{Limit: 100}})
		if err != nil {
			t.Fatal(err)
		}
		details, err := w.cs.Details(w.ctx, append(vms, more...))
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range details {
			if len(d.GPUs) != 1 {
				t.Errorf("%s holds %d GPUs", d.VM.ID, len(d.GPUs))
			}
			for _, g := range d.GPUs {
				if h, ok := holders[g.ID]; ok {
					t.Errorf("GPU %s held by %s and %s", g.ID, h, d.VM.ID)
				}
				holders[g.ID] = d.VM.ID
			}
		}
		if len(details) != 4 {
			t.Errorf("%d deploying, want 4", len(details))
		}
	})
}
