package compute_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"sync/atomic"
	"testing"

	"gpugraph/bench/fleetgen"
	"gpugraph/internal/auth"
	"gpugraph/internal/dataset"
	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/services/compute"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// BenchmarkCreate is one create over 1,000 nodes of 8 GPUs (8,000 GPUs),
// each node holding one running VM of 2 GPUs and its host share, on each
// engine: "placed" asks for 1 H100 (it fits, on the fullest node),
// "queued" for 7 H100s, which no node has free now (it is created
// pending, with the summary over every node); "queued16" and "placed16"
// are "queued" and "placed" by 16 clients at once (ns/op is the wall time
// over all creates: 1e9/ns/op creates a second).
func BenchmarkCreate(b *testing.B) {
	for _, d := range storetest.Engines() {
		b.Run(string(d), func(b *testing.B) {
			st := storetest.Open(b, d)
			ctx := context.Background()
			if _, err := dataset.Load(ctx, st, datasettest.BusyFleet()); err != nil {
				b.Fatal(err)
			}
			// As after any large load (and autovacuum would): the planner's
			// statistics of the fleet.
			if err := st.Analyze(ctx); err != nil {
				b.Fatal(err)
			}
			cs := compute.New(st)
			cs.MaxPending = 0 // the queued rows are not bounded here
			caller := datasettest.Caller(b, st, fleetgen.Token(0))
			for _, c := range []struct {
				name   string
				gpus   int
				status models.VMStatus
			}{{"placed", 1, models.VMDeploying}, {"queued", 7, models.VMPending}} {
				b.Run(c.name, func(b *testing.B) {
					benchCreate(b, cs, caller, c.gpus, c.status)
				})
			}
			b.Run("queued16", func(b *testing.B) {
				benchCreate16(b, cs, caller, 7, models.VMPending)
			})
			b.Run("placed16", func(b *testing.B) {
				benchCreate16(b, cs, caller, 1, models.VMDeploying)
			})
		})
	}
}

func benchCreate(b *testing.B, cs *compute.Service, caller *auth.Caller, gpus int, want models.VMStatus) {
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		res, err := cs.Create(context.Background(), caller, compute.CreateRequest{Name: fmt.Sprintf("bench-%d-%d", gpus, i),
			GPUModelID: new(fleetgen.Catalog[0].ID), GPUCount: new(gpus), CPUCores: new(8), RAMGb: new(64), DiskSizeGb: new(100)})
		if err != nil || res.VM.Status != want {
			b.Fatal(res, err)
		}
	}
}

// benchCreate16 is benchCreate by 16 clients at once; a create answered
// 503 VM_NODE_BUSY is sent again, as a client would.
func benchCreate16(b *testing.B, cs *compute.Service, caller *auth.Caller, gpus int, want models.VMStatus) {
	var n, resent atomic.Int64
	b.SetParallelism(max(1, 16/runtime.GOMAXPROCS(0)))
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			for {
				res, err := cs.Create(context.Background(), caller, compute.CreateRequest{Name: fmt.Sprintf("bench16-%d-%d", gpus, i),
					GPUModelID: new(fleetgen.Catalog[0].ID), GPUCount: new(gpus), CPUCores: new(8), RAMGb: new(64), DiskSizeGb: new(100)})
				var e *apierr.Error
				if errors.As(err, &e) && e.Status == http.StatusServiceUnavailable {
					resent.Add(1)
					continue
				}
				if err != nil || res.VM.Status != want {
					b.Error(res, err)
					return
				}
				break
			}
		}
	})
	b.ReportMetric(float64(resent.Load())/float64(b.N), "resent/op")
}
