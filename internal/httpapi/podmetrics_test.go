package httpapi_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/dataset"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/services/podmetrics"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// metricsFixture adds samples to Base's pods. T0 = 2025-01-01T00:00:00.000Z;
// offsets below are seconds after T0.
//
// servertest.TrainPod1 GPU_UTILIZATION_PER_GPU  gpu 0: 0→10, 60→20, 120→30.5, (a gap of
// 13 min, longer than the 5 min lookback) 900→50, 930→55; gpu 1: 30→40,
// 90→60. GPU_MEMORY_USAGE_BYTES_PER_GPU gpu 0: 0→42949672960,
// 60→50000000000; gpu 1: 0→1073741824. NVLINK_BANDWIDTH_TOTAL_PER_GPU
// gpu 0: 0→0.1, gpu 1: 0→0.2 (a sum with float noise). GPU_SM_ACTIVITY_PER_GPU
// gpu 10: 0→1, gpu 2: 0→2 (order by index). CPU_USAGE_CORES: 0→0.1, 60→3.5.
//
// servertest.TrainPod0 GPU_UTILIZATION stored: 2024-12-20T14:30:00.000Z→70 (beside its
// per-GPU series, which must then not be aggregated).
//
// servertest.ServePod0 NIM_E2E_REQUEST_LATENCY_SECONDS: 0→{0.1:50, 0.2:70, 1.0:110,
// +Inf:120} (Prometheus's testhistogram), 60→{0.1:0, 0.5:10, 1.0:20, +Inf:20}.
const metricsFixture = `{
  "podMetrics": [
    {"podId": "aaaaaaaa-0000-4000-8000-000000000002", "type": "GPU_UTILIZATION_PER_GPU", "labels": {"gpu": "0"},
     "samples": [["2025-01-01T00:00:00.000Z", "10"], ["2025-01-01T00:01:00.000Z", "20"], ["2025-01-01T00:02:00.000Z", "30.5"],
                 ["2025-01-01T00:15:00.000Z", "50"], ["2025-01-01T00:15:30.000Z", "55"]]},
    {"podId": "aaaaaaaa-0000-4000-8000-000000000002", "type": "GPU_UTILIZATION_PER_GPU", "labels": {"gpu": "1"},
     "samples": [["2025-01-01T00:00:30.000Z", "40"], ["2025-01-01T00:01:30.000Z", "60"]]},
    {"podId": "aaaaaaaa-0000-4000-8000-000000000002", "type": "GPU_MEMORY_USAGE_BYTES_PER_GPU", "labels": {"gpu": "0"},
     "samples": [["2025-01-01T00:00:00.000Z", "42949672960"], ["2025-01-01T00:01:00.000Z", "50000000000"]]},
    {"podId": "aaaaaaaa-0000-4000-8000-000000000002", "type": "GPU_MEMORY_USAGE_BYTES_PER_GPU", "labels": {"gpu": "1"},
     "samples": [["2025-01-01T00:00:00.000Z", "1073741824"]]},
    {"podId": "aaaaaaaa-0000-4000-8000-000000000002", "type": "NVLINK_BANDWIDTH_TOTAL_PER_GPU", "labels": {"gpu": "0"},
     "samples": [["2025-01-01T00:00:00.000Z", "0.1"]]},
    {"podId": "aaaaaaaa-0000-4000-8000-000000000002", "type": "NVLINK_BANDWIDTH_TOTAL_PER_GPU", "labels": {"gpu": "1"},
     "samples": [["2025-01-01T00:00:00.000Z", "0.2"]]},
    {"podId": "aaaaaaaa-0000-4000-8000-000000000002", "type": "GPU_SM_ACTIVITY_PER_GPU", "labels": {"gpu": "10"},
     "samples": [["2025-01-01T00:00:00.000Z", "1"]]},
    {"podId": "aaaaaaaa-0000-4000-8000-000000000002", "type": "GPU_SM_ACTIVITY_PER_GPU", "labels": {"gpu": "2"},
     "samples": [["2025-01-01T00:00:00.000Z", "2"]]},
    {"podId": "aaaaaaaa-0000-4000-8000-000000000002", "type": "CPU_USAGE_CORES",
     "samples": [["2025-01-01T00:00:00.000Z", "0.1"], ["2025-01-01T00:01:00.000Z", "3.5"]]},
    {"podId": "aaaaaaaa-0000-4000-8000-000000000001", "type": "GPU_UTILIZATION",
     "samples": [["2024-12-20T14:30:00.000Z", "70"]]}
  ],
  "podHistograms": [
    {"podId": "aaaaaaaa-0000-4000-8000-000000000003", "type": "NIM_E2E_REQUEST_LATENCY_SECONDS",
     "samples": [{"timestamp": "2025-01-01T00:00:00.000Z", "buckets": {"0.1": "50", "0.2": "70", "1.0": "110", "+Inf": "120"}},
                 {"timestamp": "2025-01-01T00:01:00.000Z", "buckets": {"0.1": "0", "0.5": "10", "1.0": "20", "+Inf": "20"}}]}
  ]
}`

func newMetricsEnv(t *testing.T, st *store.Store) *servertest.Env {
	t.Helper()
	env := servertest.New(t, st, servertest.Base)
	if _, err := dataset.LoadFile(context.Background(), st, []byte(metricsFixture)); err != nil {
		t.Fatal(err)
	}
	return env
}

func TestPodMetricsSampling(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := newMetricsEnv(t, st)
		for _, tc := range []struct {
			name   string
			params []string
			want   string
		}{{
			// step 300 s: steps 0, 300, 600, 900, 1200. gpu 0 at 300 is the
			// 120 s sample (between samples); at 600 the newest (120 s) is
			// older than the lookback: left out. gpu 1 has nothing at or
			// before 0 and nothing within 5 min of 600 and later.
			name: "per GPU, gap longer than the lookback",
			params: []string{"metricType", "GPU_UTILIZATION_PER_GPU", "start", "2025-01-01T00:00:00.000Z",
				"end", "2025-01-01T00:20:00.000Z", "numberOfSamples", "5"},
			want: `{'measurements': [
				{'type': 'GPU_UTILIZATION_PER_GPU', 'labels': {'gpu': '0'}, 'values': [
					{'value': '10', 'timestamp': '2025-01-01T00:00:00.000Z'},
					{'value': '30.5', 'timestamp': '2025-01-01T00:05:00.000Z'},
					{'value': '50', 'timestamp': '2025-01-01T00:15:00.000Z'},
					{'value': '55', 'timestamp': '2025-01-01T00:20:00.000Z'}]},
				{'type': 'GPU_UTILIZATION_PER_GPU', 'labels': {'gpu': '1'}, 'values': [
					{'value': '60', 'timestamp': '2025-01-01T00:05:00.000Z'}]}]}`,
		}, {
			// The mean over the GPUs that have a value at each step.
			name: "utilization is the mean of the GPUs",
			params: []string{"metricType", "GPU_UTILIZATION", "start", "2025-01-01T00:00:00.000Z",
				"end", "2025-01-01T00:20:00.000Z", "numberOfSamples", "5"},
			want: `{'measurements': [{'type': 'GPU_UTILIZATION', 'labels': {}, 'values': [
				{'value': '10', 'timestamp': '2025-01-01T00:00:00.000Z'},
				{'value': '45.25', 'timestamp': '2025-01-01T00:05:00.000Z'},
				{'value': '50', 'timestamp': '2025-01-01T00:15:00.000Z'},
				{'value': '55', 'timestamp': '2025-01-01T00:20:00.000Z'}]}]}`,
		}, {
			// At 300 the lookback is (0, 300]: gpu 1's sample at 0 is out.
			name: "memory is the sum of the GPUs",
			params: []string{"metricType", "GPU_MEMORY_USAGE_BYTES", "start", "2025-01-01T00:00:00.000Z",
				"end", "2025-01-01T00:20:00.000Z", "numberOfSamples", "5"},
			want: `{'measurements': [{'type': 'GPU_MEMORY_USAGE_BYTES', 'labels': {}, 'values': [
				{'value': '44023414784', 'timestamp': '2025-01-01T00:00:00.000Z'},
				{'value': '50000000000', 'timestamp': '2025-01-01T00:05:00.000Z'}]}]}`,
		}, {
			name: "a sum without float noise; GPUs in index order",
			params: []string{"metricType", "NVLINK_BANDWIDTH_TOTAL,GPU_SM_ACTIVITY_PER_GPU", "start", "2025-01-01T00:00:00.000Z",
				"end", "2025-01-01T00:01:00.000Z", "numberOfSamples", "1"},
			want: `{'measurements': [
				{'type': 'NVLINK_BANDWIDTH_TOTAL', 'labels': {}, 'values': [{'value': '0.3', 'timestamp': '2025-01-01T00:01:00.000Z'}]},
				{'type': 'GPU_SM_ACTIVITY_PER_GPU', 'labels': {'gpu': '2'}, 'values': [{'value': '2', 'timestamp': '2025-01-01T00:01:00.000Z'}]},
				{'type': 'GPU_SM_ACTIVITY_PER_GPU', 'labels': {'gpu': '10'}, 'values': [{'value': '1', 'timestamp': '2025-01-01T00:01:00.000Z'}]}]}`,
		}, {
			// 1,000,000 ms / 3 = 333,333.33 ms, truncated to 333,333 ms:
			// steps 0, 333.333, 666.666 and 999.999 s; the last falls short
			// of end. At 666.666 the newest gpu 0 sample (120 s) is out of
			// the lookback.
			name: "steps truncated to whole milliseconds",
			params: []string{"metricType", "GPU_UTILIZATION_PER_GPU", "start", "2025-01-01T00:00:00.000Z",
				"end", "2025-01-01T00:16:40.000Z", "numberOfSamples", "4"},
			want: `{'measurements': [
				{'type': 'GPU_UTILIZATION_PER_GPU', 'labels': {'gpu': '0'}, 'values': [
					{'value': '10', 'timestamp': '2025-01-01T00:00:00.000Z'},
					{'value': '30.5', 'timestamp': '2025-01-01T00:05:33.333Z'},
					{'value': '55', 'timestamp': '2025-01-01T00:16:39.999Z'}]},
				{'type': 'GPU_UTILIZATION_PER_GPU', 'labels': {'gpu': '1'}, 'values': [
					{'value': '60', 'timestamp': '2025-01-01T00:05:33.333Z'}]}]}`,
		}, {
			// One sample: the point at end. The 120 s sample is exactly 5 min
			// before 420 s: the lookback is left-open, so nothing answers,
			// and the type still answers, empty.
			name: "one sample at end; a sample exactly one lookback old does not count",
			params: []string{"metricType", "GPU_UTILIZATION_PER_GPU", "start", "2025-01-01T00:00:00.000Z",
				"end", "2025-01-01T00:07:00.000Z", "numberOfSamples", "1"},
			want: `{'measurements': [{'type': 'GPU_UTILIZATION_PER_GPU', 'labels': {}, 'values': []}]}`,
		}, {
			name: "one millisecond inside the lookback",
			params: []string{"metricType", "GPU_UTILIZATION_PER_GPU", "start", "2025-01-01T00:00:00.000Z",
				"end", "2025-01-01T00:06:59.999Z", "numberOfSamples", "1"},
			want: `{'measurements': [{'type': 'GPU_UTILIZATION_PER_GPU', 'labels': {'gpu': '0'}, 'values': [
				{'value': '30.5', 'timestamp': '2025-01-01T00:06:59.999Z'}]}]}`,
		}, {
			// numberOfSamples=0: every stored sample in [start, end], both
			// ends included; the aggregate combines samples of one instant.
			name: "raw samples",
			params: []string{"metricType", "GPU_UTILIZATION_PER_GPU", "metricType", "GPU_UTILIZATION",
				"start", "2025-01-01T00:01:00.000Z", "end", "2025-01-01T00:15:00.000Z", "numberOfSamples", "0"},
			want: `{'measurements': [
				{'type': 'GPU_UTILIZATION_PER_GPU', 'labels': {'gpu': '0'}, 'values': [
					{'value': '20', 'timestamp': '2025-01-01T00:01:00.000Z'},
					{'value': '30.5', 'timestamp': '2025-01-01T00:02:00.000Z'},
					{'value': '50', 'timestamp': '2025-01-01T00:15:00.000Z'}]},
				{'type': 'GPU_UTILIZATION_PER_GPU', 'labels': {'gpu': '1'}, 'values': [
					{'value': '60', 'timestamp': '2025-01-01T00:01:30.000Z'}]},
				{'type': 'GPU_UTILIZATION', 'labels': {}, 'values': [
					{'value': '20', 'timestamp': '2025-01-01T00:01:00.000Z'},
					{'value': '60', 'timestamp': '2025-01-01T00:01:30.000Z'},
					{'value': '30.5', 'timestamp': '2025-01-01T00:02:00.000Z'},
					{'value': '50', 'timestamp': '2025-01-01T00:15:00.000Z'}]}]}`,
		}, {
			// A type the pod could have but has no data for: an empty series.
			// The default numberOfSamples is 20.
			name: "stored CPU type and one with no data",
			params: []string{"metricType", "CPU_USAGE_CORES,CPU_MEMORY_USAGE_BYTES", "start", "2025-01-01T00:00:00.000Z",
				"end", "2025-01-01T00:19:00.000Z"},
			want: `{'measurements': [
				{'type': 'CPU_USAGE_CORES', 'labels': {}, 'values': [
					{'value': '0.1', 'timestamp': '2025-01-01T00:00:00.000Z'},
					{'value': '3.5', 'timestamp': '2025-01-01T00:01:00.000Z'},
					{'value': '3.5', 'timestamp': '2025-01-01T00:02:00.000Z'},
					{'value': '3.5', 'timestamp': '2025-01-01T00:03:00.000Z'},
					{'value': '3.5', 'timestamp': '2025-01-01T00:04:00.000Z'},
					{'value': '3.5', 'timestamp': '2025-01-01T00:05:00.000Z'}]},
				{'type': 'CPU_MEMORY_USAGE_BYTES', 'labels': {}, 'values': []}]}`,
		}} {
			t.Run(tc.name, func(t *testing.T) {
				got := servertest.GetMetrics(t, env, http.StatusOK, servertest.MetricsPath(servertest.TrainWorkload, servertest.TrainPod1, tc.params...))
				if want := servertest.JS(tc.want); got != want {
					t.Errorf("got  %s\nwant %s", got, want)
				}
			})
		}
	})
}

func TestPodMetricsStoredAggregateWins(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := newMetricsEnv(t, st)
		got := servertest.GetMetrics(t, env, http.StatusOK, servertest.MetricsPath(servertest.TrainWorkload, servertest.TrainPod0, "metricType", "GPU_UTILIZATION",
			"start", "2024-12-20T14:00:00.000Z", "end", "2024-12-20T14:31:00.000Z", "numberOfSamples", "1"))
		want := servertest.JS(`{'measurements': [{'type': 'GPU_UTILIZATION', 'labels': {}, 'values': [{'value': '70', 'timestamp': '2024-12-20T14:31:00.000Z'}]}]}`)
		if got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	})
}

func TestPodMetricsHistograms(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := newMetricsEnv(t, st)
		// Steps 0, 60 and 120 s; at 120 the 60 s histogram is the newest.
		// Percentiles by hand (histogram_quantile): at 0, 120 observations:
		// p50 rank 60 in (0.1, 0.2]: 0.1 + 0.1·10/20 = 0.15; p90 rank 108 in
		// (0.2, 1]: 0.2 + 0.8·38/40 = 0.96; p99 rank 118.8 in +Inf: the
		// highest finite bound, 1. At 60, 20 observations: p50 rank 10 in
		// (0.1, 0.5]: 0.5; p90 rank 18 in (0.5, 1]: 0.5 + 0.5·8/10 = 0.9;
		// p99 rank 19.8: 0.5 + 0.5·9.8/10 = 0.99.
		got := servertest.GetMetrics(t, env, http.StatusOK, servertest.MetricsPath(servertest.ServeWorkload, servertest.ServePod0,
			"metricType", "NIM_E2E_REQUEST_LATENCY_SECONDS,NIM_E2E_REQUEST_LATENCY_SECONDS_PERCENTILES,NIM_NUM_REQUESTS_RUNNING",
			"start", "2025-01-01T00:00:00.000Z", "end", "2025-01-01T00:02:00.000Z", "numberOfSamples", "3"))
		want := servertest.JS(`{'measurements': [{'type': 'NIM_NUM_REQUESTS_RUNNING', 'labels': {}, 'values': []}],
			'histogram': [
				{'type': 'NIM_E2E_REQUEST_LATENCY_SECONDS', 'values': [
					{'timestamp': '2025-01-01T00:00:00.000Z', 'data': {'0.1': '50', '0.2': '70', '1.0': '110', '+Inf': '120'}},
					{'timestamp': '2025-01-01T00:01:00.000Z', 'data': {'0.1': '0', '0.5': '10', '1.0': '20', '+Inf': '20'}},
					{'timestamp': '2025-01-01T00:02:00.000Z', 'data': {'0.1': '0', '0.5': '10', '1.0': '20', '+Inf': '20'}}]},
				{'type': 'NIM_E2E_REQUEST_LATENCY_SECONDS_PERCENTILES', 'values': [
					{'timestamp': '2025-01-01T00:00:00.000Z', 'data': {'p50': '0.15', 'p90': '0.96', 'p99': '1'}},
					{'timestamp': '2025-01-01T00:01:00.000Z', 'data': {'p50': '0.5', 'p90': '0.9', 'p99': '0.99'}},
					{'timestamp': '2025-01-01T00:02:00.000Z', 'data': {'p50': '0.5', 'p90': '0.9', 'p99': '0.99'}}]}]}`)
		if got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
		// Buckets leave in upper-bound order, +Inf last, whatever JSON
		// libraries do with map keys.
		_, body := env.Do(http.MethodGet, servertest.MetricsPath(servertest.ServeWorkload, servertest.ServePod0, "metricType", "NIM_E2E_REQUEST_LATENCY_SECONDS",
			"start", "2025-01-01T00:00:00.000Z", "end", "2025-01-01T00:00:30.000Z", "numberOfSamples", "0"), "acme-workloads", nil, nil)
		if !strings.Contains(string(body), `"data":{"0.1":"50","0.2":"70","1.0":"110","+Inf":"120"}`) {
			t.Errorf("bucket order: %s", body)
		}
		// A histogram type the NIM pod has no data for: an empty series.
		got = servertest.GetMetrics(t, env, http.StatusOK, servertest.MetricsPath(servertest.ServeWorkload, servertest.ServePod0, "metricType", "NIM_TIME_TO_FIRST_TOKEN_SECONDS_PERCENTILES",
			"start", "2025-01-01T00:00:00.000Z", "end", "2025-01-01T00:02:00.000Z"))
		want = servertest.JS(`{'measurements': [], 'histogram': [{'type': 'NIM_TIME_TO_FIRST_TOKEN_SECONDS_PERCENTILES', 'values': []}]}`)
		if got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	})
}

func TestPodMetricsPartial(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := newMetricsEnv(t, st)
		// servertest.TrainPod1 has no NIM data: the NIM types cannot exist for it.
		got := servertest.GetMetrics(t, env, http.StatusMultiStatus, servertest.MetricsPath(servertest.TrainWorkload, servertest.TrainPod1,
			"metricType", "CPU_USAGE_CORES,NIM_TIME_TO_FIRST_TOKEN_SECONDS_PERCENTILES", "metricType", "NIM_NUM_REQUESTS_RUNNING",
			"start", "2025-01-01T00:00:00.000Z", "end", "2025-01-01T00:01:00.000Z", "numberOfSamples", "1"))
		want := servertest.JS(`{'measurements': [{'type': 'CPU_USAGE_CORES', 'labels': {}, 'values': [{'value': '3.5', 'timestamp': '2025-01-01T00:01:00.000Z'}]}],
			'omittedTypes': ['NIM_TIME_TO_FIRST_TOKEN_SECONDS_PERCENTILES', 'NIM_NUM_REQUESTS_RUNNING'],
			'details': 'left out NIM_TIME_TO_FIRST_TOKEN_SECONDS_PERCENTILES, NIM_NUM_REQUESTS_RUNNING: NIM metrics exist only for pods that serve NVIDIA NIM, and none is stored for this pod'}`)
		if got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
		// Nothing left but omitted types: still 207, with no measurement.
		got = servertest.GetMetrics(t, env, http.StatusMultiStatus, servertest.MetricsPath(servertest.TrainWorkload, servertest.TrainPod1, "metricType", "NIM_E2E_REQUEST_LATENCY_SECONDS",
			"start", "2025-01-01T00:00:00.000Z", "end", "2025-01-01T00:01:00.000Z"))
		if !strings.HasPrefix(got, `{"details":"left out NIM_E2E_REQUEST_LATENCY_SECONDS: `) || !strings.Contains(got, `"measurements":[]`) {
			t.Errorf("got %s", got)
		}
	})
}

func TestPodMetricsCSV(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := newMetricsEnv(t, st)
		csvAccept := http.Header{"Accept": {"text/csv"}}
		resp := env.Request(http.MethodGet, servertest.MetricsPath(servertest.TrainWorkload, servertest.TrainPod1, "metricType", "GPU_UTILIZATION_PER_GPU,CPU_USAGE_CORES",
			"start", "2025-01-01T00:00:00.000Z", "end", "2025-01-01T00:20:00.000Z", "numberOfSamples", "5"), "acme-workloads", nil, csvAccept)
		body := readAll(t, resp)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/csv; charset=utf-8" {
			t.Fatalf("%d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
		want := "type,labels,timestamp,value\n" +
			`GPU_UTILIZATION_PER_GPU,"{""gpu"":""0""}",2025-01-01T00:00:00.000Z,10` + "\n" +
			`GPU_UTILIZATION_PER_GPU,"{""gpu"":""0""}",2025-01-01T00:05:00.000Z,30.5` + "\n" +
			`GPU_UTILIZATION_PER_GPU,"{""gpu"":""0""}",2025-01-01T00:15:00.000Z,50` + "\n" +
			`GPU_UTILIZATION_PER_GPU,"{""gpu"":""0""}",2025-01-01T00:20:00.000Z,55` + "\n" +
			`GPU_UTILIZATION_PER_GPU,"{""gpu"":""1""}",2025-01-01T00:05:00.000Z,60` + "\n" +
			`CPU_USAGE_CORES,{},2025-01-01T00:00:00.000Z,0.1` + "\n" +
			`CPU_USAGE_CORES,{},2025-01-01T00:05:00.000Z,3.5` + "\n"
		if body != want {
			t.Errorf("got\n%s\nwant\n%s", body, want)
		}

		// Histograms: one row per bucket (label le) or percentile (label quantile).
		resp = env.Request(http.MethodGet, servertest.MetricsPath(servertest.ServeWorkload, servertest.ServePod0,
			"metricType", "NIM_E2E_REQUEST_LATENCY_SECONDS,NIM_E2E_REQUEST_LATENCY_SECONDS_PERCENTILES",
			"start", "2025-01-01T00:00:00.000Z", "end", "2025-01-01T00:00:30.000Z", "numberOfSamples", "0"),
			"acme-workloads", nil, http.Header{"Accept": {"application/json;q=0.5, text/csv"}})
		body = readAll(t, resp)
		want = "type,labels,timestamp,value\n" +
			`NIM_E2E_REQUEST_LATENCY_SECONDS,"{""le"":""0.1""}",2025-01-01T00:00:00.000Z,50` + "\n" +
			`NIM_E2E_REQUEST_LATENCY_SECONDS,"{""le"":""0.2""}",2025-01-01T00:00:00.000Z,70` + "\n" +
			`NIM_E2E_REQUEST_LATENCY_SECONDS,"{""le"":""1.0""}",2025-01-01T00:00:00.000Z,110` + "\n" +
			`NIM_E2E_REQUEST_LATENCY_SECONDS,"{""le"":""+Inf""}",2025-01-01T00:00:00.000Z,120` + "\n" +
			`NIM_E2E_REQUEST_LATENCY_SECONDS_PERCENTILES,"{""quantile"":""0.5""}",2025-01-01T00:00:00.000Z,0.15` + "\n" +
			`NIM_E2E_REQUEST_LATENCY_SECONDS_PERCENTILES,"{""quantile"":""0.9""}",2025-01-01T00:00:00.000Z,0.96` + "\n" +
			`NIM_E2E_REQUEST_LATENCY_SECONDS_PERCENTILES,"{""quantile"":""0.99""}",2025-01-01T00:00:00.000Z,1` + "\n"
		if resp.StatusCode != http.StatusOK || body != want {
			t.Errorf("%d, got\n%s\nwant\n%s", resp.StatusCode, body, want)
		}

		// 207 in CSV: the omitted types in a header.
		resp = env.Request(http.MethodGet, servertest.MetricsPath(servertest.TrainWorkload, servertest.TrainPod1, "metricType", "CPU_USAGE_CORES,NIM_NUM_REQUESTS_RUNNING",
			"start", "2025-01-01T00:00:00.000Z", "end", "2025-01-01T00:01:00.000Z", "numberOfSamples", "1"), "acme-workloads", nil, csvAccept)
		body = readAll(t, resp)
		if resp.StatusCode != http.StatusMultiStatus || resp.Header.Get("X-Omitted-Metric-Types") != "NIM_NUM_REQUESTS_RUNNING" ||
			body != "type,labels,timestamp,value\nCPU_USAGE_CORES,{},2025-01-01T00:01:00.000Z,3.5\n" {
			t.Errorf("%d %v\n%s", resp.StatusCode, resp.Header, body)
		}
	})
}

func TestPodMetricsAccept(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := newMetricsEnv(t, st)
		path := servertest.MetricsPath(servertest.TrainWorkload, servertest.TrainPod1, "metricType", "CPU_USAGE_CORES", "start", "2025-01-01T00:00:00.000Z", "end", "2025-01-01T00:01:00.000Z")
		for accept, want := range map[string]string{
			"":                                   "application/json",
			"*/*":                                "application/json",
			"text/csv":                           "text/csv; charset=utf-8",
			"text/*":                             "text/csv; charset=utf-8",
			"application/json, text/csv":         "application/json",
			"text/csv, application/json":         "text/csv; charset=utf-8",
			"text/csv;q=0.4, application/json":   "application/json",
			"text/csv;q=0, */*":                  "application/json",
			"application/json;q=0.1, text/csv":   "text/csv; charset=utf-8",
			"text/html, application/xhtml+xml":   "application/json",
			"text/csv; charset=utf-8, */*;q=0.8": "text/csv; charset=utf-8",
		} {
			h := http.Header{}
			if accept != "" {
				h.Set("Accept", accept)
			}
			resp := env.Request(http.MethodGet, path, "acme-workloads", nil, h)
			readAll(t, resp)
			if got := resp.Header.Get("Content-Type"); got != want {
				t.Errorf("Accept %q: Content-Type %q, want %q", accept, got, want)
			}
		}
	})
}

func TestPodMetricsBadRequests(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := newMetricsEnv(t, st)
		const start, end = "2025-01-01T00:00:00.000Z", "2025-01-01T01:00:00.000Z"
		for _, tc := range []struct {
			params []string
			msg    string
		}{
			{[]string{"start", start, "end", end}, "metricType is required: name at least one pod metric type"},
			{[]string{"metricType", "", "start", start, "end", end}, "metricType is required: name at least one pod metric type"},
			{[]string{"metricType", "GPU_UTILIZATION,GPU_TEMPERATURE", "start", start, "end", end}, `metricType "GPU_TEMPERATURE" is not a pod metric type`},
			{[]string{"metricType", "GPU_UTILIZATION", "end", end}, "start is required (ISO 8601, e.g. 2023-06-06T12:09:18.211Z)"},
			{[]string{"metricType", "GPU_UTILIZATION", "start", "yesterday", "end", end}, `start: "yesterday" is not an ISO 8601 date-time (e.g. 2023-06-06T12:09:18.211Z; one without a zone, 2023-06-06T12:09:18.211, is read as UTC)`},
			// A date alone, or str(datetime)'s space, is not a date-time.
			{[]string{"metricType", "GPU_UTILIZATION", "start", "2025-01-01", "end", end}, `start: "2025-01-01" is not an ISO 8601 date-time (e.g. 2023-06-06T12:09:18.211Z; one without a zone, 2023-06-06T12:09:18.211, is read as UTC)`},
			{[]string{"metricType", "GPU_UTILIZATION", "start", "2025-01-01 00:00:00", "end", end}, `start: "2025-01-01 00:00:00" is not an ISO 8601 date-time (e.g. 2023-06-06T12:09:18.211Z; one without a zone, 2023-06-06T12:09:18.211, is read as UTC)`},
			{[]string{"metricType", "GPU_UTILIZATION", "start", "2025-02-30T00:00:00", "end", end}, `start: "2025-02-30T00:00:00" is not a date-time of the calendar (a day or a second out of range)`},
			{[]string{"metricType", "GPU_UTILIZATION", "start", start}, "end is required (ISO 8601, e.g. 2023-06-06T12:09:18.211Z)"},
			// A zone-less end is UTC: one before start says so in UTC.
			{[]string{"metricType", "GPU_UTILIZATION", "start", start, "end", "2024-12-31T23:00:00"}, "end (2024-12-31T23:00:00.000Z) must be after start (2025-01-01T00:00:00.000Z)"},
			{[]string{"metricType", "GPU_UTILIZATION", "start", end, "end", start}, "end (2025-01-01T00:00:00.000Z) must be after start (2025-01-01T01:00:00.000Z)"},
			{[]string{"metricType", "GPU_UTILIZATION", "start", start, "end", start}, "end (2025-01-01T00:00:00.000Z) must be after start (2025-01-01T00:00:00.000Z)"},
			{[]string{"metricType", "GPU_UTILIZATION", "start", start, "end", end, "numberOfSamples", "-1"}, "numberOfSamples must be between 0 and 1000, got -1"},
			{[]string{"metricType", "GPU_UTILIZATION", "start", start, "end", end, "numberOfSamples", "1001"}, "numberOfSamples must be between 0 and 1000, got 1001"},
			{[]string{"metricType", "GPU_UTILIZATION", "start", start, "end", end, "numberOfSamples", "ten"}, `numberOfSamples must be an integer between 0 and 1000, got "ten"`},
		} {
			status, body := env.Do(http.MethodGet, servertest.MetricsPath(servertest.TrainWorkload, servertest.TrainPod1, tc.params...), "acme-workloads", nil, nil)
			want := servertest.JS(`{'code': 400, 'message': '` + strings.ReplaceAll(tc.msg, `"`, `\'`) + `', 'requestId': 'servertest'}`)
			if got := servertest.Compact(t, body); status != http.StatusBadRequest || got != want {
				t.Errorf("%v: %d %s\nwant 400 %s", tc.params, status, got, want)
			}
		}
	})
}

func TestPodMetricsNotFound(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := newMetricsEnv(t, st)
		q := []string{"metricType", "CPU_USAGE_CORES", "start", "2025-01-01T00:00:00.000Z", "end", "2025-01-01T00:01:00.000Z"}
		for _, tc := range []struct{ workload, pod, why string }{
			{servertest.TrainWorkload, "aaaaaaaa-0000-4000-8000-00000000ffff", "missing"},
			{servertest.ServeWorkload, servertest.TrainPod1, "of another workload"},
			{servertest.GlobexWorkload, servertest.GlobexPod0, "another tenant's"},
			{servertest.TrainWorkload, servertest.GlobexPod0, "another tenant's, under a workload of ours"},
		} {
			status, body := env.Do(http.MethodGet, servertest.MetricsPath(tc.workload, tc.pod, q...), "acme-workloads", nil, nil)
			want := servertest.JS(`{'code': 404, 'message': 'pod \'` + tc.pod + `\' of workload \'` + tc.workload + `\' not found', 'requestId': 'servertest'}`)
			if got := servertest.Compact(t, body); status != http.StatusNotFound || got != want {
				t.Errorf("%s: %d %s\nwant %s", tc.why, status, got, want)
			}
		}
		// Globex sees its own pod.
		if status, body := env.Do(http.MethodGet, servertest.MetricsPath(servertest.GlobexWorkload, servertest.GlobexPod0, q...), "globex-operator", nil, nil); status != http.StatusOK {
			t.Errorf("globex's own pod: %d %s", status, body)
		}
		// 401 and 403 come before the parameters.
		if status, _ := env.Do(http.MethodGet, servertest.MetricsPath(servertest.TrainWorkload, servertest.TrainPod1), "", nil, nil); status != http.StatusUnauthorized {
			t.Errorf("no key: %d", status)
		}
		if status, body := env.Do(http.MethodGet, servertest.MetricsPath(servertest.TrainWorkload, servertest.TrainPod1), "acme-metrics", nil, nil); status != http.StatusForbidden ||
			servertest.Compact(t, body) != servertest.JS(`{'code': 403, 'message': 'this API key lacks the workloads.read permission', 'requestId': 'servertest'}`) {
			t.Errorf("metrics.write key: %d %s", status, body)
		}
	})
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	var b strings.Builder
	if _, err := io.Copy(&b, resp.Body); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// numberOfSamples=0 answers at most podmetrics.MaxRawPoints samples a request.
func TestPodMetricsRawLimit(t *testing.T) {
	t.Parallel() // the slowest of the package: they overlap each other (own servers, stores and ports)
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, servertest.Base)
		t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
		storetest.SeedSeries(t, st, servertest.TrainPod1, "CPU_USAGE_CORES", "{}", t0, time.Second, podmetrics.MaxRawPoints+1)
		end := t0.Add(podmetrics.MaxRawPoints * time.Second).Format(time.RFC3339)
		status, body := env.Do(http.MethodGet, servertest.MetricsPath(servertest.TrainWorkload, servertest.TrainPod1, "metricType", "CPU_USAGE_CORES",
			"start", t0.Format(time.RFC3339), "end", end, "numberOfSamples", "0"), "acme-workloads", nil, nil)
		want := servertest.JS(`{'code': 400, 'message': 'numberOfSamples=0 would answer more than 100000 samples: narrow start and end, or ask for 1 to 1000 samples', 'requestId': 'servertest'}`)
		if got := servertest.Compact(t, body); status != http.StatusBadRequest || got != want {
			t.Errorf("%d %s", status, got)
		}
		// The same window sampled, and one sample fewer raw, answer.
		servertest.GetMetrics(t, env, http.StatusOK, servertest.MetricsPath(servertest.TrainWorkload, servertest.TrainPod1, "metricType", "CPU_USAGE_CORES",
			"start", t0.Format(time.RFC3339), "end", end, "numberOfSamples", "1000"))
		got := servertest.GetMetrics(t, env, http.StatusOK, servertest.MetricsPath(servertest.TrainWorkload, servertest.TrainPod1, "metricType", "CPU_USAGE_CORES",
			"start", t0.Add(time.Second).Format(time.RFC3339), "end", end, "numberOfSamples", "0"))
		if n := strings.Count(got, `"value"`); n != podmetrics.MaxRawPoints {
			t.Errorf("%d raw samples", n)
		}
	})
}
