package sweep_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/services/sweep"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

const grace = 30 * time.Second

// sweepFixture, as of t0 with a 30s grace: "live" beat 10s ago, "silent"
// 31s ago, "edge" exactly 30s ago, "never" never, "parked" is offline and
// silent, "gone" removed; VMs interrupted 7 days and one second ago, 6
// days ago, and at an unknown time.
func sweepFixture(t0 time.Time) string {
	at := func(d time.Duration) string { return models.FormatTime(t0.Add(-d)) }
	gpus := func(node string) string {
		var gs []string
		for i := range 4 {
			gs = append(gs, fmt.Sprintf(`{"id": "%s-g%d", "index": %d, "uuid": "GPU-%s-%d", "modelId": "h100"}`, node, i, i, node, i))
		}
		return strings.Join(gs, ",")
	}
	vm := func(id, node, status, tier string, extra string, held ...string) string {
		ids := `[]`
		if len(held) > 0 {
			ids = `["` + strings.Join(held, `","`) + `"]`
		}
		return fmt.Sprintf(`{"id": %q, "name": %q, "organizationId": "o", "nodeId": %q, "status": %q, "capabilityTier": %q,
			"gpuModelId": "h100", "gpuCount": %d, "gpuIds": %s %s}`, id, id, node, status, tier, len(held), ids, extra)
	}
	node := func(id, status, hb string) string {
		last := "null"
		if hb != "" {
			last = `"` + hb + `"`
		}
		return fmt.Sprintf(`{"id": %q, "name": %q, "status": %q, "lastHeartbeatAt": %s, "gpus": [%s]}`, id, id, status, last, gpus(id))
	}
	return `{
 "gpuModels": [{"id": "h100", "name": "NVIDIA H100 80GB HBM3", "manufacturer": "NVIDIA", "memoryGb": 80}],
 "organizations": [{"id": "o", "name": "O", "tenantId": 1}],
 "nodes": [` + strings.Join([]string{
		node("live", "online", at(10*time.Second)),
		node("silent", "online", at(31*time.Second)),
		node("edge", "online", at(30*time.Second)),
		node("never", "online", ""),
		node("parked", "offline", at(time.Hour)),
		node("gone", "removed", at(time.Hour)),
	}, ",") + `],
 "vms": [` + strings.Join([]string{
		vm("live-vm", "live", "running", "", "", "live-g0"),
		vm("silent-vm", "silent", "running", "", `, "statusReason": "user_restarted"`, "silent-g0", "silent-g1"),
		vm("silent-pod", "silent", "running", "pod", "", "silent-g2"),
		vm("silent-deploying", "silent", "deploying", "", "", "silent-g3"),
		vm("silent-stopped", "silent", "stopped", "", `, "statusReason": "user_stopped"`),
		vm("edge-vm", "edge", "running", "", "", "edge-g0"),
		vm("never-vm", "never", "running", "", "", "never-g0"),
		vm("parked-vm", "parked", "running", "", "", "parked-g0"),
		vm("gone-vm", "gone", "running", "", "", "gone-g0"),
		vm("old-vm", "live", "interrupted", "", `, "statusReason": "node_lost", "interruptedAt": "`+at(models.InterruptedExpiry+time.Second)+`"`, "live-g1", "live-g2"),
		vm("old-pod", "live", "interrupted", "pod", `, "statusReason": "spot_preempted_for_reservation_tenant", "interruptedAt": "`+at(models.InterruptedExpiry+time.Second)+`"`, "live-g3"),
		vm("recent-vm", "never", "interrupted", "", `, "statusReason": "node_lost", "interruptedAt": "`+at(6*24*time.Hour)+`"`, "never-g1"),
		vm("undated-vm", "never", "interrupted", "", `, "statusReason": "node_lost"`, "never-g2"),
	}, ",") + `]}`
}

// states answers "id=status/reason/interruptedAt/gpus" for every VM, by id.
func states(t *testing.T, st *store.Store) string {
	t.Helper()
	var vms []models.VM
	storetest.Scan(t, st, &vms, "SELECT * FROM vms ORDER BY id")
	var out []string
	for _, v := range vms {
		at := "-"
		if v.InterruptedAt != nil {
			at = models.FormatTime(*v.InterruptedAt)
		}
		var held []string
		storetest.Scan(t, st, &held, "SELECT id FROM gpus WHERE holder_vm_id = ? ORDER BY id", v.ID)
		out = append(out, fmt.Sprintf("%s=%s/%s/%s/%d", v.ID, v.Status, v.StatusReason, at, len(held)))
	}
	return strings.Join(out, "\n")
}

func nodeStatuses(t *testing.T, st *store.Store) string {
	t.Helper()
	var ns []models.Node
	storetest.Scan(t, st, &ns, "SELECT * FROM nodes ORDER BY id")
	var out []string
	for _, n := range ns {
		out = append(out, n.ID+"="+string(n.Status))
	}
	return strings.Join(out, " ")
}

func TestSweep(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		// A recent instant: the node that reports below does so at the
		// server's time, a moment after it.
		t0 := store.Now().Truncate(time.Millisecond).Add(-time.Second)
		sw := sweep.New(st)
		datasettest.Load(t, st, sweepFixture(t0))
		res, err := sw.Sweep(ctx, t0, grace)
		if err != nil {
			t.Fatal(err)
		}
		if res != (sweep.Result{NodesOffline: 1, Interrupted: 3, Stopped: 1, Deleted: 1}) {
			t.Fatalf("result = %+v", res)
		}
		if got, want := nodeStatuses(t, st), "edge=online gone=removed live=online never=online parked=offline silent=offline"; got != want {
			t.Errorf("nodes\n got %s\nwant %s", got, want)
		}
		now := models.FormatTime(t0)
		want := strings.Join([]string{
			"edge-vm=running//-/1",
			"gone-vm=running//-/1",
			"live-vm=running//-/1",
			"never-vm=running//-/1",
			"old-pod=terminated/spot_preempted_for_reservation_tenant/-/0",
			"old-vm=stopped/node_lost/-/0",
			// A running VM on a node that was already offline and silent
			// is interrupted too: the state calls for it, whoever wrote it.
			"parked-vm=interrupted/node_lost/" + now + "/1",
			"recent-vm=interrupted/node_lost/" + models.FormatTime(t0.Add(-6*24*time.Hour)) + "/1",
			"silent-deploying=deploying//-/1",
			"silent-pod=interrupted/node_lost/" + now + "/1",
			"silent-stopped=stopped/user_stopped/-/0",
			"silent-vm=interrupted/node_lost/" + now + "/2",
			"undated-vm=interrupted/node_lost/-/1",
		}, "\n")
		if got := states(t, st); got != want {
			t.Fatalf("vms\n got %s\nwant %s", got, want)
		}
		freed := storetest.Count(t, st, "gpus", "id IN ? AND holder_vm_id IS NULL", []string{"live-g1", "live-g2", "live-g3"})
		if freed != 3 {
			t.Errorf("%d of 3 GPUs released", freed)
		}

		// The same instant again, or an earlier one: nothing to do.
		for _, at := range []time.Time{t0, t0.Add(-time.Second)} {
			if res, err := sw.Sweep(ctx, at, grace); err != nil || res.Changed() {
				t.Fatalf("sweep again at %v: %+v %v", at, res, err)
			}
		}
		if got := states(t, st); got != want {
			t.Fatalf("a second sweep changed vms:\n%s", got)
		}

		// The node reports again: it is online and what it lost resumes.
		rep, err := reports(st).ReportHeartbeat(ctx, reporter, agentapi.HeartbeatRequest{NodeName: "silent"})
		if err != nil || rep.Status != models.NodeOnline {
			t.Fatalf("heartbeat: %+v %v", rep, err)
		}
		got := states(t, st)
		for _, w := range []string{"silent-vm=running//-/2", "silent-pod=running//-/1", "silent-deploying=deploying//-/1", "silent-stopped=stopped/user_stopped/-/0"} {
			if !strings.Contains(got, w+"\n") {
				t.Errorf("after the heartbeat, want %s in\n%s", w, got)
			}
		}
		// Seven days after it was lost, an interrupted VM stops; the VMs
		// this sweep interrupts start their seven days now.
		res, err = sw.Sweep(ctx, t0.Add(models.InterruptedExpiry+time.Microsecond), grace)
		if err != nil {
			t.Fatal(err)
		}
		if res != (sweep.Result{NodesOffline: 3, Interrupted: 4, Stopped: 2}) {
			t.Errorf("a week later = %+v", res)
		}
		if v := vm(t, st, "parked-vm"); v.Status != models.VMStopped || v.StatusReason != models.ReasonNodeLost {
			t.Errorf("parked-vm = %+v", v)
		}
	})
}

// Many replicas sweeping one database at once change each row once.
func TestSweepReplicas(t *testing.T) {
	for _, d := range storetest.Engines() {
		t.Run(string(d), func(t *testing.T) {
			t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
			replicas := storetest.Replicas(t, d, 6)
			datasettest.Load(t, replicas[0], sweepFixture(t0))
			results := make([]sweep.Result, len(replicas))
			var wg sync.WaitGroup
			for i, st := range replicas {
				wg.Go(func() {
					var err error
					if results[i], err = sweep.New(st).Sweep(context.Background(), t0, grace); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			var sum sweep.Result
			for _, r := range results {
				sum.NodesOffline += r.NodesOffline
				sum.Interrupted += r.Interrupted
				sum.Stopped += r.Stopped
				sum.Deleted += r.Deleted
			}
			if sum != (sweep.Result{NodesOffline: 1, Interrupted: 3, Stopped: 1, Deleted: 1}) {
				t.Fatalf("replicas changed %+v in all", sum)
			}
		})
	}
}

// The sweep's transitions go through the lifecycle's one write path: each
// row interrupted by a silent node has its event, by the sweep, in its own
// organization's log.
func TestSweepWritesEvents(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		now := store.Now()
		datasettest.Load(t, st, `{
 "organizations": [{"id": "org-a", "name": "A", "tenantId": 1}, {"id": "org-b", "name": "B", "tenantId": 2}],
 "nodes": [{"id": "n1", "name": "n1", "status": "online", "lastHeartbeatAt": "`+models.FormatTime(now.Add(-time.Hour))+`"}],
 "vms": [
  {"id": "vm-a", "name": "vm-a", "organizationId": "org-a", "nodeId": "n1", "status": "running"},
  {"id": "pod-a", "name": "pod-a", "organizationId": "org-a", "nodeId": "n1", "status": "running", "capabilityTier": "pod"},
  {"id": "vm-b", "name": "vm-b", "organizationId": "org-b", "nodeId": "n1", "status": "running"}]}`)
		sw := sweep.New(st)
		res, err := sw.Sweep(ctx, now, 30*time.Second)
		if err != nil || res != (sweep.Result{NodesOffline: 1, Interrupted: 3}) {
			t.Fatalf("sweep: %+v %v", res, err)
		}
		for _, v := range []struct{ org, id string }{{"org-a", "vm-a"}, {"org-a", "pod-a"}, {"org-b", "vm-b"}} {
			evs, err := st.EventsAfter(ctx, v.org, []string{v.id}, 0, 10)
			if err != nil || len(evs) != 1 || evs[0].From != models.VMRunning || evs[0].To != models.VMInterrupted ||
				evs[0].Transition != models.NodeLost || evs[0].ActorKind != models.ActorSweep || evs[0].Reason != models.ReasonNodeLost {
				t.Errorf("%s: %v %+v", v.id, err, evs)
			}
		}
		nevs, err := st.NodeEventsAfter(ctx, []string{"n1"}, 0, 10)
		if err != nil || len(nevs) != 1 || *nevs[0].FromStatus != models.NodeOnline || *nevs[0].ToStatus != models.NodeOffline ||
			nevs[0].ActorKind != models.ActorSweep {
			t.Errorf("node events: %v %+v", err, nevs)
		}
		if again, _ := sw.Sweep(ctx, now, 30*time.Second); again.Changed() {
			t.Errorf("a second sweep of the same instant changed %+v", again)
		}
	})
}

// Rows deploying for longer than the provision timeout fail with the
// sentence that says so and let go of their GPUs; a row deploying for
// less, or one that is running, is left alone, and a second run fails
// nothing more.
func TestFailStuckDeploying(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
		datasettest.Load(t, st, sweepFixture(t0))
		storetest.Exec(t, st, "UPDATE vms SET status_changed_at = ? WHERE id = 'silent-deploying'", t0.Add(-11*time.Minute))
		storetest.Exec(t, st, "UPDATE vms SET status = 'deploying', status_changed_at = ? WHERE id = 'live-vm'", t0.Add(-9*time.Minute))
		sw := sweep.New(st)
		n, err := sw.FailStuckDeploying(ctx, t0, sweep.DefaultProvisionTimeout)
		if err != nil || n != 1 {
			t.Fatalf("failed %d rows, %v; want 1", n, err)
		}
		v := vm(t, st, "silent-deploying")
		if want := models.ReasonFailedToStartPrefix + "it was still deploying after 10m0s; no node agent reported it running."; v.Status != models.VMFailed ||
			v.StatusReason != want {
			t.Errorf("silent-deploying = %s %q, want failed %q", v.Status, v.StatusReason, want)
		}
		held := storetest.Count(t, st, "gpus", "holder_vm_id = ?", "silent-deploying")
		if held != 0 {
			t.Errorf("a failed row still holds %d GPUs", held)
		}
		if v := vm(t, st, "live-vm"); v.Status != models.VMDeploying {
			t.Errorf("a row deploying for 9 minutes = %s", v.Status)
		}
		if n, err := sw.FailStuckDeploying(ctx, t0, sweep.DefaultProvisionTimeout); err != nil || n != 0 {
			t.Errorf("again: %d, %v", n, err)
		}
	})
}
