package instancetypes_test

import (
	"context"
	"fmt"
	"testing"

	"gpugraph/bench/fleetgen"
	"gpugraph/internal/auth"
	"gpugraph/internal/dataset"
	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/services/instancetypes"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// BenchmarkOffers reads the catalog with its capacity over 1,000 nodes of 8
// GPUs (8,000 GPUs, 2,000 VMs on them), 12 types: one snapshot and every
// type weighed against every node, on each engine.
func BenchmarkOffers(b *testing.B) {
	for _, d := range storetest.Engines() {
		b.Run(string(d), func(b *testing.B) {
			st := storetest.Open(b, d)
			ctx := context.Background()
			f := datasettest.BusyFleet()
			for _, m := range fleetgen.Catalog {
				for _, n := range []int{1, 2, 4, 8} {
					f.InstanceTypes = append(f.InstanceTypes, models.InstanceType{Name: fmt.Sprintf("gpu_%dx_%s", n, m.ID[:4]),
						GPUModelID: &m.ID, GPUCount: n, CPUCores: 28 * n, RAMGb: 256 * n, DiskSizeGb: 3750 * n, PricePerHourCents: 249 * n})
				}
			}
			if _, err := dataset.Load(ctx, st, f); err != nil {
				b.Fatal(err)
			}
			svc := instancetypes.New(st)
			caller := auth.SystemCaller()
			b.ReportAllocs()
			for b.Loop() {
				offers, err := svc.Offers(ctx, caller)
				if err != nil || len(offers) != 12 {
					b.Fatal(len(offers), err)
				}
			}
		})
	}
}
