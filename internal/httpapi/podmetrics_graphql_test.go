package httpapi_test

import (
	"strings"
	"testing"

	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

const podMetricsQuery = `query($w: ID!, $p: ID!, $types: [PodMetricType!]!, $start: Time!, $end: Time!, $n: Int) {
  podMetrics(workloadId: $w, podId: $p, metricTypes: $types, start: $start, end: $end, numberOfSamples: $n) {
    measurements { type labels values { value timestamp } }
    histogram { type values { timestamp data } }
    omittedTypes
  }
}`

func TestPodMetricsGraphQL(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := newMetricsEnv(t, st)
		vars := func(w, p string, types []string, start, end string, n any) map[string]any {
			return map[string]any{"w": w, "p": p, "types": types, "start": start, "end": end, "n": n}
		}
		for _, tc := range []struct {
			name string
			vars map[string]any
			want string
		}{{
			// The REST case "utilization is the mean of the GPUs", with the
			// Time scalar's milliseconds.
			name: "aggregate",
			vars: vars(servertest.TrainWorkload, servertest.TrainPod1, []string{"GPU_UTILIZATION", "CPU_MEMORY_USAGE_BYTES"}, "2025-01-01T00:00:00.000Z", "2025-01-01T00:20:00.000Z", 5),
			want: `{'podMetrics': {'measurements': [
				{'type': 'GPU_UTILIZATION', 'labels': {}, 'values': [
					{'value': '10', 'timestamp': '2025-01-01T00:00:00.000Z'},
					{'value': '45.25', 'timestamp': '2025-01-01T00:05:00.000Z'},
					{'value': '50', 'timestamp': '2025-01-01T00:15:00.000Z'},
					{'value': '55', 'timestamp': '2025-01-01T00:20:00.000Z'}]},
				{'type': 'CPU_MEMORY_USAGE_BYTES', 'labels': {}, 'values': []}],
				'histogram': null, 'omittedTypes': []}}`,
		}, {
			name: "histograms and percentiles",
			vars: vars(servertest.ServeWorkload, servertest.ServePod0, []string{"NIM_E2E_REQUEST_LATENCY_SECONDS_PERCENTILES", "NIM_E2E_REQUEST_LATENCY_SECONDS"},
				"2025-01-01T00:00:00.000Z", "2025-01-01T00:00:30.000Z", 1),
			want: `{'podMetrics': {'measurements': [], 'histogram': [
				{'type': 'NIM_E2E_REQUEST_LATENCY_SECONDS_PERCENTILES', 'values': [
					{'timestamp': '2025-01-01T00:00:30.000Z', 'data': {'p50': '0.15', 'p90': '0.96', 'p99': '1'}}]},
				{'type': 'NIM_E2E_REQUEST_LATENCY_SECONDS', 'values': [
					{'timestamp': '2025-01-01T00:00:30.000Z', 'data': {'0.1': '50', '0.2': '70', '1.0': '110', '+Inf': '120'}}]}],
				'omittedTypes': []}}`,
		}, {
			// Partial: data for what can exist, the rest in omittedTypes, no error.
			name: "omitted NIM types",
			vars: vars(servertest.TrainWorkload, servertest.TrainPod1, []string{"NIM_NUM_REQUESTS_RUNNING", "CPU_USAGE_CORES", "NIM_TIME_TO_FIRST_TOKEN_SECONDS"},
				"2025-01-01T00:00:00.000Z", "2025-01-01T00:01:00.000Z", 1),
			want: `{'podMetrics': {'measurements': [
				{'type': 'CPU_USAGE_CORES', 'labels': {}, 'values': [{'value': '3.5', 'timestamp': '2025-01-01T00:01:00.000Z'}]}],
				'histogram': null, 'omittedTypes': ['NIM_NUM_REQUESTS_RUNNING', 'NIM_TIME_TO_FIRST_TOKEN_SECONDS']}}`,
		}} {
			t.Run(tc.name, func(t *testing.T) {
				r := env.GraphQL("acme-workloads", podMetricsQuery, tc.vars)
				if len(r.Errors) > 0 {
					t.Fatalf("errors: %+v", r.Errors)
				}
				if got, want := servertest.Compact(t, r.Data), servertest.JS(tc.want); got != want {
					t.Errorf("got  %s\nwant %s", got, want)
				}
			})
		}
		// Buckets keep their upper-bound order on this face too.
		r := env.GraphQL("acme-workloads", podMetricsQuery, vars(servertest.ServeWorkload, servertest.ServePod0, []string{"NIM_E2E_REQUEST_LATENCY_SECONDS"},
			"2025-01-01T00:00:00.000Z", "2025-01-01T00:00:30.000Z", 0))
		if want := `"data":{"0.1":"50","0.2":"70","1.0":"110","+Inf":"120"}`; !strings.Contains(string(r.Data), want) {
			t.Errorf("bucket order: %s", r.Data)
		}

		for _, tc := range []struct {
			name, token string
			vars        map[string]any
			code        string
			status      float64
			msg         string
		}{
			{"missing pod", "acme-workloads", vars(servertest.TrainWorkload, "nope", []string{"CPU_USAGE_CORES"}, "2025-01-01T00:00:00.000Z", "2025-01-01T00:01:00.000Z", 1),
				"NOT_FOUND", 404, `pod "nope" of workload "` + servertest.TrainWorkload + `" not found`},
			{"another tenant's pod", "acme-workloads", vars(servertest.GlobexWorkload, servertest.GlobexPod0, []string{"CPU_USAGE_CORES"}, "2025-01-01T00:00:00.000Z", "2025-01-01T00:01:00.000Z", 1),
				"NOT_FOUND", 404, `pod "` + servertest.GlobexPod0 + `" of workload "` + servertest.GlobexWorkload + `" not found`},
			{"numberOfSamples", "acme-workloads", vars(servertest.TrainWorkload, servertest.TrainPod1, []string{"CPU_USAGE_CORES"}, "2025-01-01T00:00:00.000Z", "2025-01-01T00:01:00.000Z", 1001),
				"BAD_REQUEST", 400, "numberOfSamples must be between 0 and 1000, got 1001"},
			{"end before start", "acme-workloads", vars(servertest.TrainWorkload, servertest.TrainPod1, []string{"CPU_USAGE_CORES"}, "2025-01-01T00:01:00.000Z", "2025-01-01T00:00:00.000Z", 1),
				"BAD_REQUEST", 400, "end (2025-01-01T00:00:00.000Z) must be after start (2025-01-01T00:01:00.000Z)"},
			{"no type", "acme-workloads", vars(servertest.TrainWorkload, servertest.TrainPod1, []string{}, "2025-01-01T00:00:00.000Z", "2025-01-01T00:01:00.000Z", 1),
				"BAD_REQUEST", 400, "metricType is required: name at least one pod metric type"},
			{"permission", "acme-metrics", vars(servertest.TrainWorkload, servertest.TrainPod1, []string{"CPU_USAGE_CORES"}, "2025-01-01T00:00:00.000Z", "2025-01-01T00:01:00.000Z", 1),
				"FORBIDDEN", 403, "this API key lacks the workloads.read permission"},
		} {
			r := env.GraphQL(tc.token, podMetricsQuery, tc.vars)
			if len(r.Errors) != 1 || r.Code() != tc.code || r.Errors[0].Extensions["status"] != tc.status || r.Errors[0].Message != tc.msg {
				t.Errorf("%s: %+v\nwant %s %v %q", tc.name, r.Errors, tc.code, tc.status, tc.msg)
			}
		}
		// An unknown type is the schema's to refuse.
		r = env.GraphQL("acme-workloads", podMetricsQuery, vars(servertest.TrainWorkload, servertest.TrainPod1, []string{"GPU_TEMPERATURE"}, "2025-01-01T00:00:00.000Z", "2025-01-01T00:01:00.000Z", 1))
		if r.Code() != "BAD_REQUEST" {
			t.Errorf("unknown type: %+v", r.Errors)
		}
	})
}
