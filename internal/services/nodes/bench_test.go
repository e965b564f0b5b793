package nodes

import (
	"context"
	"fmt"
	"testing"
	"time"

	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// fleetOf registers n nodes of 8 GPUs, each with a running VM, as agents
// would, and answers one heartbeat per node.
func fleetOf(b *testing.B, st *store.Store, n int) []heartbeat {
	b.Helper()
	ctx := context.Background()
	var hbs []heartbeat
	for i := range n {
		name := fmt.Sprintf("dgx-%04d", i)
		inv := inventory{NodeName: name, AgentVersion: "2.6.1", CPUCores: 224, RAMGb: 2048, DiskGb: 27939}
		hb := heartbeat{NodeName: name}
		for g := range 8 {
			uuid := fmt.Sprintf("GPU-%s-%d", name, g)
			inv.GPUs = append(inv.GPUs, h100(g, uuid))
			hb.GPUs = append(hb.GPUs, heartbeatGPU{UUID: uuid, Health: models.GPUHealthy, Utilization: 50, MemoryUsedBytes: 1 << 30})
		}
		if _, err := service(st).register(ctx, inv, t0); err != nil {
			b.Fatal(err)
		}
		hbs = append(hbs, hb)
	}
	storetest.Exec(b, st, `INSERT INTO organizations (id, name, tenant_id) VALUES ('o', 'O', 1)`)
	storetest.Exec(b, st, `INSERT INTO vms (id, name, organization_id, status, node_id)
		SELECT 'vm-' || id, 'vm-' || id, 'o', 'running', id FROM nodes`)
	return hbs
}

// One heartbeat of an 8-GPU node: what every node costs the database every
// interval.
func BenchmarkHeartbeat(b *testing.B) {
	for _, d := range storetest.Engines() {
		b.Run(string(d), func(b *testing.B) {
			st := storetest.Open(b, d)
			hbs := fleetOf(b, st, 100)
			svc := service(st)
			ctx := context.Background()
			b.ResetTimer()
			for i := range b.N {
				if _, err := svc.recordHeartbeat(ctx, hbs[i%len(hbs)], t0.Add(time.Duration(i)*time.Millisecond)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
