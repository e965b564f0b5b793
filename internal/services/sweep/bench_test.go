package sweep_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/services/sweep"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// fleetFixture is n live nodes of 8 GPUs, each with a running VM, as of t0.
func fleetFixture(n int, t0 time.Time) string {
	var nodes, vms []string
	for i := range n {
		name := fmt.Sprintf("dgx-%04d", i)
		var gpus []string
		for g := range 8 {
			gpus = append(gpus, fmt.Sprintf(`{"id": "GPU-%s-%d", "index": %d, "uuid": "GPU-%s-%d", "modelId": "h100"}`, name, g, g, name, g))
		}
		nodes = append(nodes, fmt.Sprintf(`{"id": %q, "name": %q, "status": "online", "cpuCores": 224, "ramGb": 2048, "diskGb": 27939,
			"lastHeartbeatAt": %q, "gpus": [%s]}`, name, name, models.FormatTime(t0), strings.Join(gpus, ",")))
		vms = append(vms, fmt.Sprintf(`{"id": "vm-%s", "name": "vm-%s", "organizationId": "o", "nodeId": %q, "status": "running"}`, name, name, name))
	}
	return `{"gpuModels": [{"id": "h100", "name": "NVIDIA H100 80GB HBM3", "manufacturer": "NVIDIA", "memoryGb": 80}],
		"organizations": [{"id": "o", "name": "O", "tenantId": 1}],
		"nodes": [` + strings.Join(nodes, ",") + `], "vms": [` + strings.Join(vms, ",") + `]}`
}

// One sweep of a 1,000-node fleet where every node is live: the cost of
// each tick of each replica.
func BenchmarkSweepIdle(b *testing.B) {
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, d := range storetest.Engines() {
		b.Run(string(d), func(b *testing.B) {
			st := storetest.Open(b, d)
			datasettest.Load(b, st, fleetFixture(1000, t0))
			sw := sweep.New(st)
			ctx := context.Background()
			b.ResetTimer()
			for range b.N {
				if res, err := sw.Sweep(ctx, t0.Add(time.Second), 30*time.Second); err != nil || res.Changed() {
					b.Fatal(res, err)
				}
			}
		})
	}
}
