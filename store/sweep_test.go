package store_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"gpugraph/models"
	"gpugraph/store"
	"gpugraph/store/storetest"
)

const grace = 30 * time.Second

// sweepFixture, as of t0 with a 30s grace: "live" beat 10s ago, "silent"
// 31s ago, "edge" exactly 30s ago, "never" never, "parked" is offline and
// silent, "gone" removed; VMs interrupted 7 days and one second ago, 6
// days ago, and at an unknown time.
func sweepFixture() string {
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
	if err := st.DB.Order("id").Find(&vms).Error; err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, v := range vms {
		at := "-"
		if v.InterruptedAt != nil {
			at = models.FormatTime(*v.InterruptedAt)
		}
		var held []string
		st.DB.Table("gpus").Where("holder_vm_id = ?", v.ID).Order("id").Pluck("id", &held)
		out = append(out, fmt.Sprintf("%s=%s/%s/%s/%d", v.ID, v.Status, v.StatusReason, at, len(held)))
	}
	return strings.Join(out, "\n")
}

func nodeStatuses(t *testing.T, st *store.Store) string {
	t.Helper()
	var ns []models.Node
	st.DB.Order("id").Find(&ns)
	var out []string
	for _, n := range ns {
		out = append(out, n.ID+"="+string(n.Status))
	}
	return strings.Join(out, " ")
}

func TestSweep(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		load(t, st, sweepFixture())
		res, err := st.Sweep(ctx, t0, grace)
		if err != nil {
			t.Fatal(err)
		}
		if res != (store.SweepResult{NodesOffline: 1, Interrupted: 3, Stopped: 1, Deleted: 1}) {
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
			"recent-vm=interrupted/node_lost/2025-02-23T12:00:00.000Z/1",
			"silent-deploying=deploying//-/1",
			"silent-pod=interrupted/node_lost/" + now + "/1",
			"silent-stopped=stopped/user_stopped/-/0",
			"silent-vm=interrupted/node_lost/" + now + "/2",
			"undated-vm=interrupted/node_lost/-/1",
		}, "\n")
		if got := states(t, st); got != want {
			t.Fatalf("vms\n got %s\nwant %s", got, want)
		}
		var freed int64
		st.DB.Table("gpus").Where("id IN ? AND holder_vm_id IS NULL", []string{"live-g1", "live-g2", "live-g3"}).Count(&freed)
		if freed != 3 {
			t.Errorf("%d of 3 GPUs released", freed)
		}

		// The same instant again, or an earlier one: nothing to do.
		for _, at := range []time.Time{t0, t0.Add(-time.Second)} {
			if res, err := st.Sweep(ctx, at, grace); err != nil || res.Changed() {
				t.Fatalf("sweep again at %v: %+v %v", at, res, err)
			}
		}
		if got := states(t, st); got != want {
			t.Fatalf("a second sweep changed vms:\n%s", got)
		}

		// The node reports again: it is online and what it lost resumes.
		rep, err := st.RecordHeartbeat(ctx, store.Heartbeat{NodeName: "silent"}, t0.Add(time.Minute))
		if err != nil || rep.Resumed != 2 {
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
		res, err = st.Sweep(ctx, t0.Add(models.InterruptedExpiry+time.Microsecond), grace)
		if err != nil {
			t.Fatal(err)
		}
		if res != (store.SweepResult{NodesOffline: 3, Interrupted: 4, Stopped: 2}) {
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
			replicas := storetest.Replicas(t, d, 6)
			load(t, replicas[0], sweepFixture())
			results := make([]store.SweepResult, len(replicas))
			var wg sync.WaitGroup
			for i, st := range replicas {
				wg.Go(func() {
					var err error
					if results[i], err = st.Sweep(context.Background(), t0, grace); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			var sum store.SweepResult
			for _, r := range results {
				sum.NodesOffline += r.NodesOffline
				sum.Interrupted += r.Interrupted
				sum.Stopped += r.Stopped
				sum.Deleted += r.Deleted
			}
			if sum != (store.SweepResult{NodesOffline: 1, Interrupted: 3, Stopped: 1, Deleted: 1}) {
				t.Fatalf("replicas changed %+v in all", sum)
			}
		})
	}
}

// A heartbeat racing the sweep never leaves an online node with node_lost
// VMs: either it comes first (the node is not silent) or it resumes them.
func TestSweepRacesHeartbeat(t *testing.T) {
	for _, d := range storetest.Engines() {
		t.Run(string(d), func(t *testing.T) {
			replicas := storetest.Replicas(t, d, 3)
			st := replicas[0]
			load(t, st, sweepFixture())
			for i := range 20 {
				now := t0.Add(time.Duration(i) * time.Hour)
				st.DB.Exec("UPDATE nodes SET status = 'online', last_heartbeat_at = ? WHERE id = 'silent'", now.Add(-time.Minute))
				var wg sync.WaitGroup
				wg.Go(func() {
					if _, err := replicas[1].Sweep(context.Background(), now, grace); err != nil {
						t.Error(err)
					}
				})
				wg.Go(func() {
					if _, err := replicas[2].RecordHeartbeat(context.Background(), store.Heartbeat{NodeName: "silent"}, now); err != nil {
						t.Error(err)
					}
				})
				wg.Wait()
				n := node(t, st, "silent")
				v := vm(t, st, "silent-vm")
				if n.Status != models.NodeOnline || v.Status != models.VMRunning {
					t.Fatalf("round %d: node %s, vm %s/%s", i, n.Status, v.Status, v.StatusReason)
				}
			}
		})
	}
}
