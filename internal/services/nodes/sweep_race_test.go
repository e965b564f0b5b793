package nodes

import (
	"context"
	"sync"
	"testing"
	"time"

	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/services/sweep"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// A heartbeat racing the sweep never leaves an online node with node_lost
// VMs: either it comes first (the node is not silent) or it waits for the
// sweep's node lock and resumes them (the lock order of internal/store/locks.go).
func TestHeartbeatRacesSweep(t *testing.T) {
	for _, d := range storetest.Engines() {
		t.Run(string(d), func(t *testing.T) {
			replicas := storetest.Replicas(t, d, 3)
			st := replicas[0]
			datasettest.Load(t, st, `{
 "organizations": [{"id": "o", "name": "O", "tenantId": 1}],
 "nodes": [{"id": "silent", "name": "silent", "status": "online", "lastHeartbeatAt": "2025-03-01T11:59:00Z"}],
 "vms": [{"id": "silent-vm", "name": "silent-vm", "organizationId": "o", "nodeId": "silent", "status": "running"},
         {"id": "silent-pod", "name": "silent-pod", "organizationId": "o", "nodeId": "silent", "status": "running", "capabilityTier": "pod"}]}`)
			sw, reports := sweep.New(replicas[1]), service(replicas[2])
			for i := range 20 {
				now := t0.Add(time.Duration(i) * time.Hour)
				storetest.Exec(t, st, "UPDATE nodes SET status = 'online', last_heartbeat_at = ? WHERE id = 'silent'", now.Add(-time.Minute))
				var wg sync.WaitGroup
				wg.Go(func() {
					if _, err := sw.Sweep(context.Background(), now, 30*time.Second); err != nil {
						t.Error(err)
					}
				})
				wg.Go(func() {
					if _, err := reports.recordHeartbeat(context.Background(), heartbeat{NodeName: "silent"}, now); err != nil {
						t.Error(err)
					}
				})
				wg.Wait()
				n := node(t, st, "silent")
				for _, id := range []string{"silent-vm", "silent-pod"} {
					if v := vm(t, st, id); n.Status != models.NodeOnline || v.Status != models.VMRunning {
						t.Fatalf("round %d: node %s, %s %s/%s", i, n.Status, id, v.Status, v.StatusReason)
					}
				}
			}
		})
	}
}
