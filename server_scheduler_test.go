package main

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"gpugraph/models"
	"gpugraph/store"
	"gpugraph/store/storetest"
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
			if err := st.DB.Where("id = ?", vm.ID).Take(&placed).Error; err != nil {
				t.Fatal(err)
			}
			if placed.Status != models.VMDeploying || placed.NodeID == nil || *placed.NodeID != "q1" {
				t.Errorf("placed %s on %v, want deploying on q1 (the node r-01 left)", placed.Status, placed.NodeID)
			}
			var evs []models.VMEvent
			if err := st.DB.Where("vm_id = ?", vm.ID).Order("id").Find(&evs).Error; err != nil {
				t.Fatal(err)
			}
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
	if err := st.DB.Where("id = ?", id).Take(&v).Error; err != nil {
		t.Fatal(err)
	}
	return v.Status
}
