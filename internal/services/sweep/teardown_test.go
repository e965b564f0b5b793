package sweep_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/services/sweep"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// teardownFixture: two nodes an agent reported for, one offline since
// before the grace and one online, each with a pod and a VM whose stop is
// being torn down (they still hold their GPUs), a pod tearing down on the
// offline node that left the API (an expired pod), and a pod the offline
// node's loss interrupted.
func teardownFixture(t *testing.T, st *store.Store, t0 time.Time) {
	t.Helper()
	datasettest.Load(t, st, `{
 "gpuModels": [{"id": "h100", "name": "NVIDIA H100 80GB HBM3", "manufacturer": "NVIDIA", "memoryGb": 80}],
 "organizations": [{"id": "o", "name": "O", "tenantId": 1}],
 "nodes": [
  {"id": "away", "name": "away", "status": "offline", "lastHeartbeatAt": "`+models.FormatTime(t0.Add(-10*time.Minute))+`",
   "gpus": [{"id": "a0", "index": 0, "uuid": "GPU-a0", "modelId": "h100"}, {"id": "a1", "index": 1, "uuid": "GPU-a1", "modelId": "h100"},
            {"id": "a2", "index": 2, "uuid": "GPU-a2", "modelId": "h100"}, {"id": "a3", "index": 3, "uuid": "GPU-a3", "modelId": "h100"}]},
  {"id": "here", "name": "here", "status": "online", "lastHeartbeatAt": "`+models.FormatTime(t0.Add(-time.Second))+`",
   "gpus": [{"id": "h0", "index": 0, "uuid": "GPU-h0", "modelId": "h100"}]}],
 "vms": [
  {"id": "away-pod", "name": "away-pod", "organizationId": "o", "nodeId": "away", "status": "stopped", "statusReason": "user_stopped",
   "capabilityTier": "pod", "gpuModelId": "h100", "gpuCount": 1, "tearingDown": true},
  {"id": "away-vm", "name": "away-vm", "organizationId": "o", "nodeId": "away", "status": "stopped", "statusReason": "spot_reclaimed_by_capacity_owner",
   "gpuModelId": "h100", "gpuCount": 1, "cpuCores": 8, "ramGb": 64, "diskSizeGb": 100, "tearingDown": true},
  {"id": "away-lost", "name": "away-lost", "organizationId": "o", "nodeId": "away", "status": "interrupted", "statusReason": "node_lost",
   "capabilityTier": "pod", "gpuModelId": "h100", "gpuCount": 1, "gpuIds": ["a3"]},
  {"id": "here-pod", "name": "here-pod", "organizationId": "o", "nodeId": "here", "status": "stopped", "statusReason": "user_stopped",
   "capabilityTier": "pod", "gpuModelId": "h100", "gpuCount": 1, "tearingDown": true}]}`)
	// What a stop on an agent's node leaves: the GPUs still held, and the
	// nodes known to have agents; one of away's pods has since expired.
	for _, q := range []string{
		"UPDATE nodes SET agent_reported_at = last_heartbeat_at",
		"UPDATE gpus SET holder_vm_id = 'away-pod' WHERE id = 'a0'",
		"UPDATE gpus SET holder_vm_id = 'away-vm' WHERE id = 'a1'",
		"UPDATE gpus SET holder_vm_id = 'here-pod' WHERE id = 'h0'",
	} {
		storetest.Exec(t, st, q)
	}
	storetest.Exec(t, st, "INSERT INTO vms (id, name, organization_id, node_id, status, status_reason, capability_tier, gpu_model_id, gpu_count, tearing_down, deleted_at) "+
		"VALUES ('away-expired', 'away-expired', 'o', 'away', 'terminated', 'node_lost', 'pod', 'h100', 1, ?, ?)", true, t0.Add(-time.Hour))
	storetest.Exec(t, st, "UPDATE gpus SET holder_vm_id = 'away-expired' WHERE id = 'a2'")
}

// held answers "id=tearingDown/gpus" for the fixture's rows.
func held(t *testing.T, st *store.Store) map[string]string {
	t.Helper()
	var rows []struct {
		ID          string
		TearingDown bool
		Held        int
	}
	storetest.Scan(t, st, &rows, "SELECT v.id, v.tearing_down, (SELECT COUNT(*) FROM gpus WHERE holder_vm_id = v.id) AS held FROM vms v ORDER BY v.id")
	out := map[string]string{}
	for _, r := range rows {
		out[r.ID] = map[bool]string{true: "down", false: "up"}[r.TearingDown] + "/" + string(rune('0'+r.Held))
	}
	return out
}

// A teardown on a node that is not online is given up on once the node
// has been silent for the grace: what it held is freed, once, with one
// teardown-expired event each, however many replicas sweep at once; the
// online node's teardown and the interrupted pod are left alone, and
// nothing happens before the grace.
func TestExpireTeardownsReplicas(t *testing.T) {
	for _, d := range storetest.Engines() {
		t.Run(string(d), func(t *testing.T) {
			t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
			replicas := storetest.Replicas(t, d, 4)
			st := replicas[0]
			teardownFixture(t, st, t0)
			ctx := context.Background()
			if n, err := sweep.New(st).ExpireTeardowns(ctx, t0, 15*time.Minute); err != nil || n != 0 {
				t.Fatalf("before the grace: %d %v", n, err)
			}
			counts := make([]int64, len(replicas))
			var wg sync.WaitGroup
			for i, r := range replicas {
				wg.Go(func() {
					var err error
					if counts[i], err = sweep.New(r).ExpireTeardowns(ctx, t0, 5*time.Minute); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			var sum int64
			for _, c := range counts {
				sum += c
			}
			if sum != 3 {
				t.Errorf("replicas freed %d teardowns in all (%v), want 3", sum, counts)
			}
			want := map[string]string{"away-pod": "up/0", "away-vm": "up/0", "away-expired": "up/0", "away-lost": "up/1", "here-pod": "down/1"}
			if got := held(t, st); len(got) != len(want) || got["away-pod"] != want["away-pod"] || got["away-vm"] != want["away-vm"] ||
				got["away-expired"] != want["away-expired"] || got["away-lost"] != want["away-lost"] || got["here-pod"] != want["here-pod"] {
				t.Errorf("after the sweeps: %v, want %v", got, want)
			}
			for _, id := range []string{"away-pod", "away-vm", "away-expired"} {
				var evs []models.VMEvent
				storetest.Scan(t, st, &evs, "SELECT * FROM vm_events WHERE vm_id = ?", id)
				v := vm(t, st, id)
				if len(evs) != 1 || evs[0].Transition != models.TeardownExpired || evs[0].From != v.Status || evs[0].To != v.Status ||
					evs[0].ActorKind != models.ActorSweep || evs[0].Reason != v.StatusReason {
					t.Errorf("%s: events %+v", id, evs)
				}
			}
			if v := storetest.Violations(t, st); v != nil {
				t.Errorf("violations: %v", v)
			}
		})
	}
}
