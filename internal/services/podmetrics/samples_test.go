package podmetrics

import (
	"errors"
	"testing"
	"time"

	"gpugraph/models"
)

func TestCheckSamples(t *testing.T) {
	const pod = "AAAAAAAA-0000-4000-8000-000000000001"
	metrics := []MetricSeries{{PodID: pod, Type: "GPU_UTILIZATION_PER_GPU", Labels: map[string]string{"gpu": "0"},
		Samples: [][2]string{{"2024-12-20T14:30:00.1234Z", "41.5"}, {"2024-12-20T14:31:00Z", "1e2"}}}}
	histograms := []HistogramSeries{{PodID: pod, Type: "NIM_TIME_TO_FIRST_TOKEN_SECONDS",
		Samples: []HistogramSample{{Timestamp: "2024-12-20T14:30:00Z", Buckets: map[string]string{"0.1": "3", "1.0": "5", "+Inf": "5"}}}}}
	s, err := CheckSamples(metrics, histograms)
	if err != nil {
		t.Fatal(err)
	}
	canonical := "aaaaaaaa-0000-4000-8000-000000000001"
	at := time.Date(2024, 12, 20, 14, 30, 0, 123_000_000, time.UTC)
	want := []models.MetricSample{
		{PodID: canonical, Type: "GPU_UTILIZATION_PER_GPU", Labels: `{"gpu":"0"}`, TS: at, Value: 41.5},
		{PodID: canonical, Type: "GPU_UTILIZATION_PER_GPU", Labels: `{"gpu":"0"}`, TS: at.Add(time.Minute - 123*time.Millisecond), Value: 100},
	}
	if len(s.Metrics) != 2 || s.Metrics[0] != want[0] || s.Metrics[1] != want[1] {
		t.Errorf("metrics %+v, want %+v", s.Metrics, want)
	}
	if len(s.Histograms) != 1 || s.Histograms[0].Buckets != `{"+Inf":"5","0.1":"3","1.0":"5"}` || s.Histograms[0].PodID != canonical {
		t.Errorf("histograms %+v", s.Histograms)
	}
	if len(s.Pods) != 1 || s.Pods[0] != (PodRef{ID: canonical, Row: `podMetrics[0] (pod "aaaaaaaa-0000-4000-8000-000000000001", type "GPU_UTILIZATION_PER_GPU")`}) {
		t.Errorf("pods %+v", s.Pods)
	}

	for _, tc := range []struct {
		metric MetricSeries
		want   string
	}{
		{MetricSeries{PodID: pod, Type: "GPU_UTILIZATION_PER_GPU", Samples: [][2]string{{"2024-12-20T14:30:00Z", "1"}}},
			`podMetrics[0] (pod "aaaaaaaa-0000-4000-8000-000000000001", type "GPU_UTILIZATION_PER_GPU"): a _PER_GPU series needs a "gpu" label (e.g. {"gpu": "0"})`},
		{MetricSeries{PodID: pod, Type: "CPU_USAGE_CORES", Samples: [][2]string{{"2024-12-20T14:30:00Z", "NaN"}}},
			`podMetrics[0] (pod "aaaaaaaa-0000-4000-8000-000000000001", type "CPU_USAGE_CORES").samples[0]: value "NaN" is not a finite number`},
		{MetricSeries{PodID: pod, Type: "CPU_USAGE_CORES", Samples: [][2]string{{"2024-12-20T14:30:00.0001Z", "1"}, {"2024-12-20T14:30:00.0009Z", "2"}}},
			`podMetrics[0] (pod "aaaaaaaa-0000-4000-8000-000000000001", type "CPU_USAGE_CORES").samples[1]: the same series and timestamp as podMetrics[0] (pod "aaaaaaaa-0000-4000-8000-000000000001", type "CPU_USAGE_CORES").samples[0]`},
		{MetricSeries{Type: "CPU_USAGE_CORES", Samples: [][2]string{{"2024-12-20T14:30:00Z", "1"}}},
			`podMetrics[0] (pod "", type "CPU_USAGE_CORES"): podId is missing`},
	} {
		_, err := CheckSamples([]MetricSeries{tc.metric}, nil)
		var e *EntryError
		if !errors.As(err, &e) || err.Error() != tc.want {
			t.Errorf("got %v, want an *EntryError %q", err, tc.want)
		}
	}
}
