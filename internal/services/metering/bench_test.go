package metering_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"gpugraph/internal/auth"
	"gpugraph/internal/services/metering"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// One metering pass over 10,000 running workloads of 1,000 organizations
// (half of them prepaid), each pass a minute after the one before: the
// cost of each tick of --metering-interval.
func BenchmarkPass10kWorkloads(b *testing.B) {
	for _, d := range storetest.Engines() {
		b.Run(string(d), func(b *testing.B) {
			ctx := context.Background()
			st := storetest.Open(b, d)
			var vms []models.VM
			for o := range 1000 {
				org := fmt.Sprintf("org-%04d", o)
				if err := st.CreateOrganization(ctx, org, org, 10_000+o, false); err != nil {
					b.Fatal(err)
				}
				for i := range 10 {
					id := fmt.Sprintf("vm-%04d-%d", o, i)
					vms = append(vms, models.VM{ID: id, Name: id, OrganizationID: org, Status: models.VMRunning,
						GPUCount: 1, PricePerHourCents: 100 + i})
				}
			}
			if err := st.DB.CreateInBatches(vms, 500).Error; err != nil {
				b.Fatal(err)
			}
			m := metering.New(st, nil)
			for o := 0; o < 1000; o += 2 {
				if _, err := m.Grant(ctx, auth.SystemCaller(), fmt.Sprintf("org-%04d", o), 1_000_000, "bench", ""); err != nil {
					b.Fatal(err)
				}
			}
			at := t0
			if _, err := m.CloseThrough(ctx, at); err != nil {
				b.Fatal(err)
			}
			records := 0
			b.ResetTimer()
			for range b.N {
				at = at.Add(time.Minute)
				res, err := m.CloseThrough(ctx, at)
				if err != nil || res.Records != 10_000 || res.Debits != 500 {
					b.Fatal(res, err)
				}
				records += res.Records
			}
			b.ReportMetric(float64(records)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
