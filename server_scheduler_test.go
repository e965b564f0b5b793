package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// The scheduler is woken by the event log, not only its timer: with
// --scheduler-interval an hour, a VM created pending on a full fleet is
// placed once a stop frees its GPUs, long before the hour. On PostgreSQL
// the create goes to one server and the stop to the other, so the wake
// crosses replicas (the LISTEN connection) as well as reaching the
// server that committed the stop.
func TestSchedulerWakesOnStop(t *testing.T) {
	for _, d := range storetest.Engines() {
		t.Run(string(d), func(t *testing.T) {
			servers, st := startQueueServers(t, d, "--scheduler-interval", "1h", "--heartbeat-grace", "1h", "--provision-timeout", "1h")
			status, body := requestAs(t, "POST", servers[0], "b-operator", "/v1/vms",
				[]byte(`{"name": "waits", "gpuModelId": "h100-80gb", "gpuCount": 2, "cpuCores": 8, "ramGb": 64, "diskSizeGb": 100}`))
			var vm struct{ ID, Status string }
			if err := json.Unmarshal([]byte(body), &vm); err != nil || status != http.StatusCreated || vm.Status != "pending" {
				t.Fatalf("create: %d %s", status, body)
			}
			// Long enough for the passes the create itself woke to be done
			// (each finding no room), so that only the stop can place it.
			time.Sleep(200 * time.Millisecond)
			if got := vmStatus(t, st, vm.ID); got != models.VMPending {
				t.Fatalf("before the stop: %s, want pending", got)
			}
			if status, body := requestAs(t, "POST", servers[len(servers)-1], "b-operator", "/v1/vms/r-01/stop", nil); status != http.StatusOK {
				t.Fatalf("stop: %d %s", status, body)
			}
			for i := 0; vmStatus(t, st, vm.ID) == models.VMPending; i++ {
				if i == 600 {
					t.Fatal("still pending 30 s after the stop, with the timer an hour away")
				}
				time.Sleep(50 * time.Millisecond)
			}
			var placed models.VM
			storetest.Take(t, st, &placed, "vms", "id = ?", vm.ID)
			if placed.Status != models.VMDeploying || placed.NodeID == nil || *placed.NodeID != "q1" {
				t.Errorf("placed %s on %v, want deploying on q1 (the node r-01 left)", placed.Status, placed.NodeID)
			}
			var evs []models.VMEvent
			storetest.Scan(t, st, &evs, "SELECT * FROM vm_events WHERE vm_id = ? ORDER BY id", vm.ID)
			if len(evs) != 2 || evs[1].Transition != models.QueuePlaced || evs[1].ActorKind != models.ActorScheduler {
				t.Errorf("events %+v, want create-queued then queue-placed by the scheduler", evs)
			}
		})
	}
}

// vmStatus reads a VM's status.
func vmStatus(t *testing.T, st *store.Store, id string) models.VMStatus {
	t.Helper()
	var v models.VM
	storetest.Take(t, st, &v, "vms", "id = ?", id)
	return v.Status
}

// --max-pending-per-org bounds each organization's pending queue across
// the replicas: with 2, org-b's third create on a full fleet answers 409
// PENDING_LIMIT_EXCEEDED from either server, and org-a still queues. The
// flag defaults to 1,000 and must be positive.
func TestMaxPendingPerOrg(t *testing.T) {
	if o, err := parseFlags(nil); err != nil || o.maxPendingPerOrg != 1000 {
		t.Errorf("default: %d, %v; want 1000", o.maxPendingPerOrg, err)
	}
	for _, v := range []string{"0", "-1"} {
		_, err := parseFlags([]string{"--max-pending-per-org", v})
		if want := "--max-pending-per-org " + v + ": must be positive"; err == nil || err.Error() != want {
			t.Errorf("--max-pending-per-org %s: %v, want %q", v, err, want)
		}
	}
	for _, d := range storetest.Engines() {
		t.Run(string(d), func(t *testing.T) {
			servers, _ := startQueueServers(t, d, "--max-pending-per-org", "2", "--heartbeat-grace", "1h", "--provision-timeout", "1h")
			create := func(server, token, name string) (int, string) {
				return requestAs(t, "POST", server, token, "/v1/vms",
					[]byte(`{"name": "`+name+`", "gpuModelId": "h100-80gb", "gpuCount": 2, "cpuCores": 8, "ramGb": 64, "diskSizeGb": 100}`))
			}
			for k := range 2 {
				if status, body := create(servers[k%len(servers)], "b-operator", fmt.Sprintf("waits-%d", k)); status != http.StatusCreated ||
					!strings.Contains(body, `"status":"pending"`) {
					t.Fatalf("waits-%d: %d %s", k, status, body)
				}
			}
			for _, server := range servers {
				status, body := create(server, "b-operator", "one-more")
				var e struct {
					Error struct{ Code, Message string }
				}
				if err := json.Unmarshal([]byte(body), &e); err != nil || status != http.StatusConflict ||
					e.Error.Code != "PENDING_LIMIT_EXCEEDED" || e.Error.Message !=
					"pending limit is 2 VMs and pods per organization; 2 pending, and no node has room for this one now: wait for one to be placed, or terminate one" {
					t.Errorf("one-more: %d %s", status, body)
				}
			}
			if status, body := create(servers[len(servers)-1], "a-operator", "theirs"); status != http.StatusCreated ||
				!strings.Contains(body, `"status":"pending"`) {
				t.Errorf("org-a's create: %d %s", status, body)
			}
		})
	}
}
