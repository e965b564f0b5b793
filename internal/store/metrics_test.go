package store_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"gorm.io/gorm"

	"gpugraph/internal/dataset"
	"gpugraph/internal/lib/timeseries"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// insertSamples stores samples of one series as they are (times in UTC).
func insertSamples(t *testing.T, st *store.Store, ser store.Series, samples []timeseries.Sample) {
	t.Helper()
	rows := make([]models.MetricSample, len(samples))
	for i, s := range samples {
		rows[i] = models.MetricSample{PodID: ser.PodID, Type: ser.Type, Labels: ser.Labels, TS: s.T.UTC(), Value: s.V}
	}
	if err := st.DB.CreateInBatches(rows, 500).Error; err != nil {
		t.Fatal(err)
	}
}

// The store's two ways of sampling a series, and the choice between them,
// answer exactly what timeseries.RangeQuery answers over the same samples,
// including samples that sit exactly on a step or exactly one lookback
// before it.
func TestMetricAtStepsMatchesPromQL(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		if _, err := dataset.LoadFile(context.Background(), st, []byte(benchFixture)); err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		t0 := benchStart
		at := func(d string) time.Time {
			p, err := time.ParseDuration(d)
			if err != nil {
				t.Fatal(err)
			}
			return t0.Add(p)
		}
		sparse := store.Series{PodID: benchPod, Type: "CPU_USAGE_CORES", Labels: "{}"}
		var sparseSamples []timeseries.Sample
		for i, d := range []string{"0s", "1m", "2m", "7m", "7m0.001s", "15m", "20m", "20m0.5s", "21m"} {
			sparseSamples = append(sparseSamples, timeseries.Sample{T: at(d), V: float64(i) + 0.25})
		}
		insertSamples(t, st, sparse, sparseSamples)
		// A dense series: one sample a second for an hour.
		dense := store.Series{PodID: benchPod, Type: "GPU_UTILIZATION_PER_GPU", Labels: `{"gpu":"3"}`}
		var denseSamples []timeseries.Sample
		for i := range 3600 {
			denseSamples = append(denseSamples, timeseries.Sample{T: t0.Add(time.Duration(i) * time.Second), V: float64(i % 97)})
		}
		insertSamples(t, st, dense, denseSamples)

		for _, c := range []struct {
			ser        store.Series
			samples    []timeseries.Sample
			start, end string
			n          int
		}{
			{sparse, sparseSamples, "0s", "21m", 22},      // every minute: steps on samples, 7m exactly 5m after 2m
			{sparse, sparseSamples, "0s", "30m", 7},       // 5 min steps, gaps
			{sparse, sparseSamples, "-10m", "25m", 1000},  // 2.1 s steps
			{sparse, sparseSamples, "2m", "12m0.001s", 2}, // 12m0.001 is 5m0.001 after 7m0.001... and 7m exactly
			{sparse, sparseSamples, "1s", "25m20.5s", 1},  // one step at end
			{sparse, sparseSamples, "0s", "1s", 1000},     // 1 ms steps
			{dense, denseSamples, "0s", "59m59s", 1000},
			{dense, denseSamples, "-3m", "30m", 13},
			{dense, denseSamples, "10m", "10m5s", 3},
		} {
			start, end := at(c.start), at(c.end)
			steps := timeseries.Steps(start, end, c.n)
			want := timeseries.RangeQuery(c.samples, start, end, c.n)
			name := fmt.Sprintf("%s %s..%s n=%d", c.ser.Type, c.start, c.end, c.n)
			for way, read := range map[string]func(context.Context, store.Series, []time.Time) ([]timeseries.Point, error){
				"probe": st.MetricProbe, "scan": st.MetricScan, "chosen": st.MetricAtSteps,
			} {
				got, err := read(ctx, c.ser, steps)
				if err != nil {
					t.Fatalf("%s %s: %v", name, way, err)
				}
				if !equalPoints(got, want) {
					t.Errorf("%s %s:\n got %v\nwant %v", name, way, got, want)
				}
			}
		}

		// Raw reads are [from, to] inclusive, oldest first, bounded.
		got, err := st.MetricRange(ctx, sparse, at("1m"), at("7m"), 100)
		if err != nil {
			t.Fatal(err)
		}
		if want := sparseSamples[1:4]; !equalPoints(got, want) {
			t.Errorf("range: got %v, want %v", got, want)
		}
		if got, _ := st.MetricRange(ctx, sparse, at("0s"), at("1h"), 4); len(got) != 4 {
			t.Errorf("range limit 4: %d rows", len(got))
		}
	})
}

func equalPoints(a, b []timeseries.Point) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].T.Equal(b[i].T) || a[i].V != b[i].V {
			return false
		}
	}
	return true
}

func TestHistogramAtSteps(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		if _, err := dataset.LoadFile(ctx, st, []byte(benchFixture)); err != nil {
			t.Fatal(err)
		}
		ser := store.Series{PodID: benchPod, Type: "NIM_TIME_TO_FIRST_TOKEN_SECONDS"}
		var rows []models.HistogramSample
		for i := range 40 {
			rows = append(rows, models.HistogramSample{PodID: ser.PodID, Type: ser.Type, TS: benchStart.Add(time.Duration(i) * 30 * time.Second),
				Buckets: fmt.Sprintf(`{"+Inf":"%d"}`, i)})
		}
		if err := st.DB.Create(&rows).Error; err != nil {
			t.Fatal(err)
		}
		steps := timeseries.Steps(benchStart.Add(-time.Minute), benchStart.Add(40*time.Minute), 9)
		// Steps every 5m10s from −1m: the newest histogram at or before each
		// (every 30 s, the last at 19m30s), none before 0, none after 24m30s.
		want := []store.HistogramPoint{}
		for _, s := range steps {
			i := int(s.Sub(benchStart) / (30 * time.Second))
			if s.Before(benchStart) || s.Sub(benchStart.Add(time.Duration(min(i, 39))*30*time.Second)) >= timeseries.LookbackDelta {
				continue
			}
			want = append(want, store.HistogramPoint{T: s, Buckets: fmt.Sprintf(`{"+Inf":"%d"}`, min(i, 39))})
		}
		if len(want) != 4 {
			t.Fatalf("test expects 4 points, computed %v", want)
		}
		for way, read := range map[string]func(context.Context, store.Series, []time.Time) ([]store.HistogramPoint, error){
			"probe": st.HistogramProbe, "chosen": st.HistogramAtSteps,
		} {
			got, err := read(ctx, ser, steps)
			if err != nil {
				t.Fatal(err)
			}
			for i := range got {
				got[i].T = got[i].T.UTC()
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: got %v\nwant %v", way, got, want)
			}
		}
	})
}

func TestMetricLabelsAndNIM(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		if _, err := dataset.LoadFile(ctx, st, []byte(benchFixture)); err != nil {
			t.Fatal(err)
		}
		for _, l := range []string{`{"gpu":"2"}`, `{"gpu":"10"}`, `{"gpu":"0"}`} {
			insertSamples(t, st, store.Series{PodID: benchPod, Type: "GPU_UTILIZATION_PER_GPU", Labels: l},
				[]timeseries.Sample{{T: benchStart, V: 1}, {T: benchStart.Add(time.Second), V: 2}})
		}
		got, err := st.MetricLabels(ctx, benchPod, "GPU_UTILIZATION_PER_GPU")
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{`{"gpu":"0"}`, `{"gpu":"10"}`, `{"gpu":"2"}`}; !reflect.DeepEqual(got, want) {
			t.Errorf("labels %v, want %v", got, want)
		}
		if got, err := st.MetricLabels(ctx, benchPod, "GPU_UTILIZATION"); err != nil || len(got) != 0 {
			t.Errorf("no series: %v %v", got, err)
		}
		has := func() bool {
			t.Helper()
			ok, err := st.PodHasNIMData(ctx, benchPod)
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}
		if has() {
			t.Error("a pod without NIM samples has NIM data")
		}
		err = st.DB.Transaction(func(tx *gorm.DB) error {
			return tx.Create(&models.HistogramSample{PodID: benchPod, Type: "NIM_E2E_REQUEST_LATENCY_SECONDS", TS: benchStart, Buckets: `{"+Inf":"1"}`}).Error
		})
		if err != nil {
			t.Fatal(err)
		}
		if !has() {
			t.Error("a NIM histogram does not count as NIM data")
		}
		st.DB.Exec("DELETE FROM histogram_samples")
		insertSamples(t, st, store.Series{PodID: benchPod, Type: "NIM_NUM_REQUESTS_RUNNING", Labels: "{}"}, []timeseries.Sample{{T: benchStart, V: 3}})
		if !has() {
			t.Error("a NIM sample does not count as NIM data")
		}
	})
}
