package metering_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/services/metering"
	"gpugraph/internal/store"
)

// /metrics shows the metering's lag (since the last pass's through, or
// since start before one) and the records it closed, with no label.
func TestTheMeteringMetrics(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		clk := &clock{now: t0}
		m := metering.New(st, clk.Now)
		reg := prometheus.NewPedanticRegistry()
		reg.MustRegister(m.Collectors()...)
		clk.Set(t0.Add(time.Minute))
		if lag := m.Lag(); lag != time.Minute {
			t.Errorf("lag before a pass: %s; want 1m0s since start", lag)
		}
		if _, err := m.Pass(ctx); err != nil { // the fixture's rows start at t0+55s
			t.Fatal(err)
		}
		clk.Set(t0.Add(2 * time.Minute))
		res, err := m.Pass(ctx)
		if err != nil || res.Records == 0 {
			t.Fatalf("%+v %v", res, err)
		}
		clk.Set(t0.Add(2*time.Minute + 30*time.Second))
		want := `# HELP gpugraph_metering_lag_seconds Seconds since the usage this process's metering closed reaches (its last completed pass's through; since start before one completes).
# TYPE gpugraph_metering_lag_seconds gauge
gpugraph_metering_lag_seconds 35
# HELP gpugraph_metering_records_closed_total Usage records this process's metering passes closed.
# TYPE gpugraph_metering_records_closed_total counter
gpugraph_metering_records_closed_total ` + itoa(res.Records) + `
`
		if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
			"gpugraph_metering_lag_seconds", "gpugraph_metering_records_closed_total"); err != nil {
			t.Error(err)
		}
	})
}

func itoa(n int) string { return strconv.Itoa(n) }
