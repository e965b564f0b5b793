package nodes

import (
	"context"
	"reflect"
	"testing"
	"time"

	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

func TestHeartbeat(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		datasettest.Load(t, st, reconcileFixture)
		if _, err := service(st).register(ctx, inventory{NodeName: "dgx-01", AgentVersion: "2.6.1",
			GPUs: []inventoryGPU{h100(0, "GPU-a"), h100(1, "GPU-b"), h100(2, "GPU-c"), h100(3, "GPU-d")}}, t0); err != nil {
			t.Fatal(err)
		}

		_, err := service(st).recordHeartbeat(ctx, heartbeat{NodeName: "nope"}, t0)
		datasettest.WantError(t, err, 404, CodeNodeNotFound, "this node is not registered; send POST /v1/agent/inventory first")
		// A GPU the inventory did not register refuses the whole heartbeat.
		t1 := t0.Add(10 * time.Second)
		_, err = service(st).recordHeartbeat(ctx, heartbeat{NodeName: "dgx-01", GPUs: []heartbeatGPU{
			{UUID: "GPU-a", Health: models.GPUFailed, FailedReason: "XID 79"}, {UUID: "GPU-x", Health: models.GPUHealthy}}}, t1)
		datasettest.WantError(t, err, 404, CodeGPUNotFound, "GPU GPU-x is not in this node's inventory; send POST /v1/agent/inventory again")
		if n := node(t, st, "n1"); !n.LastHeartbeatAt.Equal(t0) {
			t.Fatalf("refused heartbeat wrote lastHeartbeatAt %v", n.LastHeartbeatAt)
		}

		// The sweep took the node offline and interrupted vm1 meanwhile.
		storetest.Exec(t, st, "UPDATE nodes SET status = 'offline' WHERE id = 'n1'")
		storetest.Exec(t, st, "UPDATE vms SET status = 'interrupted', status_reason = 'node_lost', interrupted_at = ? WHERE id = 'vm1'", t0)
		rep, err := service(st).recordHeartbeat(ctx, heartbeat{NodeName: "dgx-01", AgentVersion: "2.7.0", GPUs: []heartbeatGPU{
			{UUID: "GPU-a", Health: models.GPUHealthy, Utilization: 87, MemoryUsedBytes: 40 << 30},
			{UUID: "GPU-b", Health: models.GPUFailed, FailedReason: "XID 79", Utilization: 0, MemoryUsedBytes: 0},
			{UUID: "GPU-c", Health: models.GPUHealthy, Utilization: 5, MemoryUsedBytes: 1 << 40}}}, t1)
		if err != nil || !reflect.DeepEqual(rep, outcome{NodeID: "n1", Status: models.NodeOnline, Resumed: 1, AgentVersion: "2.7.0"}) {
			t.Fatalf("heartbeat: %+v %v", rep, err)
		}
		n := node(t, st, "n1")
		if n.Status != models.NodeOnline || n.AgentVersion != "2.7.0" || !n.LastHeartbeatAt.Equal(t1) {
			t.Errorf("node = %+v", n)
		}
		if v := vm(t, st, "vm1"); v.Status != models.VMRunning || v.InterruptedAt != nil {
			t.Errorf("vm1 = %+v", v)
		}
		// What restartVm reads: gpus.health and failed_reason as stored.
		type row struct {
			UUID            string
			Health          string
			FailedReason    *string
			Utilization     *int
			MemoryUsedBytes *int64
			SampledAt       *time.Time
		}
		rows := func() map[string]row {
			var rs []row
			storetest.Scan(t, st, &rs, "SELECT uuid, health, failed_reason, utilization, memory_used_bytes, sampled_at FROM gpus WHERE node_id = 'n1'")
			m := map[string]row{}
			for _, r := range rs {
				m[r.UUID] = r
			}
			return m
		}
		rs := rows()
		if r := rs["GPU-b"]; r.Health != "failed" || r.FailedReason == nil || *r.FailedReason != "XID 79" {
			t.Errorf("GPU-b = %+v", r)
		}
		if r := rs["GPU-a"]; r.Health != "healthy" || r.FailedReason != nil || *r.Utilization != 87 || *r.MemoryUsedBytes != 40<<30 || !r.SampledAt.Equal(t1) {
			t.Errorf("GPU-a = %+v", r)
		}
		if r := rs["GPU-c"]; *r.Utilization != 5 || *r.MemoryUsedBytes != 1<<40 {
			t.Errorf("GPU-c = %+v", r)
		}
		if r := rs["GPU-f"]; r.Utilization != nil || r.SampledAt != nil {
			t.Errorf("an unreported GPU got a sample: %+v", r)
		}

		// Never healed by a report, and the first reason stays.
		t2 := t1.Add(10 * time.Second)
		if _, err := service(st).recordHeartbeat(ctx, heartbeat{NodeName: "dgx-01", GPUs: []heartbeatGPU{
			{UUID: "GPU-b", Health: models.GPUHealthy, Utilization: 1}}}, t2); err != nil {
			t.Fatal(err)
		}
		if _, err := service(st).recordHeartbeat(ctx, heartbeat{NodeName: "dgx-01", GPUs: []heartbeatGPU{
			{UUID: "GPU-b", Health: models.GPUFailed, FailedReason: "XID 94"}}}, t2); err != nil {
			t.Fatal(err)
		}
		if _, err := service(st).register(ctx, inventory{NodeName: "dgx-01", AgentVersion: "2.6.1",
			GPUs: []inventoryGPU{h100(0, "GPU-a"), h100(1, "GPU-b"), h100(2, "GPU-c"), h100(3, "GPU-d")}}, t2); err != nil {
			t.Fatal(err)
		}
		if r := rows()["GPU-b"]; r.Health != "failed" || *r.FailedReason != "XID 79" || *r.Utilization != 0 {
			t.Errorf("GPU-b after healthy reports = %+v", r)
		}
		if n := node(t, st, "n1"); n.AgentVersion != "2.6.1" {
			t.Errorf("agentVersion = %s", n.AgentVersion)
		}
	})
}
