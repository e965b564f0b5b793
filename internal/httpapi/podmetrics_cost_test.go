package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"gpugraph/internal/dataset"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// Issue 23, finding 8: twenty aliased podMetrics cost 6 s of CPU, and
// refused ones 0.5 s each, as complexity counted each as a handful of
// fields. It now weighs the samples each would read (numberOfSamples ×
// its types' series, or the range at the stored density), so they are
// refused before any resolver runs: no statement but the key's lookup.
func TestPodMetricsComplexity(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, servertest.Base)
		aliased := func(n int, args string) string {
			var b strings.Builder
			b.WriteString("{")
			for i := range n {
				fmt.Fprintf(&b, ` m%d: podMetrics(workloadId: "%s", podId: "%s", %s) { measurements { type values { value timestamp } } }`, i, servertest.TrainWorkload, servertest.TrainPod1, args)
			}
			b.WriteString(" }")
			return b.String()
		}
		const year = `start: "2024-01-01T00:00:00Z", end: "2025-01-01T00:00:00Z"`
		for _, tc := range []struct {
			name, query, want string
		}{
			// 20 × (8 series × 1,000 samples × 4 + 6 fields)
			{"20 per-GPU types at 1,000 samples", aliased(20, `metricTypes: [GPU_UTILIZATION_PER_GPU], numberOfSamples: 1000, `+year),
				"operation has complexity 640120, which exceeds the limit of 200000"},
			// 20 × (100,000 + 6): a year at 10 s is more than the raw cap
			{"20 raw reads over a year", aliased(20, `metricTypes: [CPU_USAGE_CORES], numberOfSamples: 0, `+year),
				"operation has complexity 2000120, which exceeds the limit of 200000"},
			// One field of seven types at 1,000 samples: 42 series × 1,000 × 4
			// + 6 = 168,006 runs (want "": accepted).
			{"seven types at 1,000 samples", aliased(1, `metricTypes: [GPU_UTILIZATION_PER_GPU, GPU_UTILIZATION, GPU_MEMORY_USAGE_BYTES_PER_GPU, GPU_MEMORY_USAGE_BYTES, CPU_USAGE_CORES, CPU_MEMORY_USAGE_BYTES, GPU_SM_ACTIVITY_PER_GPU], numberOfSamples: 1000, `+year), ""},
		} {
			var r *servertest.Response
			n := env.Statements(func() { r = env.GraphQL("acme-workloads", tc.query, nil) })
			if tc.want == "" {
				// Under the limit, it runs (Base stores few of those series,
				// so the read's own bound holds too).
				if r.Status != http.StatusOK || len(r.Errors) != 0 {
					t.Errorf("%s: %d %+v", tc.name, r.Status, r.Errors)
				}
				continue
			}
			if r.Status != http.StatusBadRequest || len(r.Errors) != 1 || r.Errors[0].Message != tc.want {
				t.Errorf("%s: %d %+v\nwant 400 %s", tc.name, r.Status, r.Errors, tc.want)
			}
			if n > 1 {
				t.Errorf("%s: %d statements ran before the refusal, want the key's lookup only", tc.name, n)
			}
		}
		// Variables weigh as literals do.
		r := env.GraphQL("acme-workloads", `query($n: Int, $t: [PodMetricType!]!) { a: podMetrics(workloadId: "`+servertest.TrainWorkload+`", podId: "`+servertest.TrainPod1+`", metricTypes: $t, numberOfSamples: $n, `+year+`) { omittedTypes }
			b: podMetrics(workloadId: "`+servertest.TrainWorkload+`", podId: "`+servertest.TrainPod1+`", metricTypes: $t, numberOfSamples: $n, `+year+`) { omittedTypes } }`,
			map[string]any{"n": 1000, "t": []string{"GPU_UTILIZATION_PER_GPU", "GPU_MEMORY_USAGE_BYTES_PER_GPU", "GPU_SM_ACTIVITY_PER_GPU", "GPU_UTILIZATION"}})
		if r.Status != http.StatusBadRequest || len(r.Errors) != 1 || !strings.HasPrefix(r.Errors[0].Message, "operation has complexity 256004,") {
			t.Errorf("variables: %d %+v", r.Status, r.Errors)
		}
	})
}

// The read bounds itself too, on both faces, before any sample is read:
// the series its types read (here 4 per-GPU types of 8 GPUs) times its
// samples, at most 25,000.
func TestPodMetricsSeriesBound(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, servertest.Base)
		types := []string{"GPU_UTILIZATION_PER_GPU", "GPU_MEMORY_USAGE_BYTES_PER_GPU", "GPU_SM_ACTIVITY_PER_GPU", "GPU_TENSOR_ACTIVITY_PER_GPU"}
		var entries []string
		for _, typ := range types {
			for g := range 8 {
				entries = append(entries, fmt.Sprintf(`{"podId": "%s", "type": "%s", "labels": {"gpu": "%d"}, "samples": [["2025-01-01T00:00:00Z", "1"]]}`, servertest.TrainPod1, typ, g))
			}
		}
		if _, err := dataset.LoadFile(context.Background(), st, []byte(`{"podMetrics": [`+strings.Join(entries, ",")+`]}`)); err != nil {
			t.Fatal(err)
		}
		const want = "this request would read 32 series at 1000 samples each, more than the 25000 series × samples one request may read: ask for fewer metric types or fewer samples"
		path := servertest.MetricsPath(servertest.TrainWorkload, servertest.TrainPod1, "metricType", strings.Join(types, ","), "start", "2025-01-01T00:00:00Z", "end", "2025-01-02T00:00:00Z", "numberOfSamples", "1000")
		var status int
		var body []byte
		n := env.Statements(func() { status, body = env.Do(http.MethodGet, path, "acme-workloads", nil, nil) })
		if status != 400 || !strings.Contains(string(body), want) {
			t.Errorf("REST: %d %s", status, body)
		}
		// The key, the pod, the NIM check is not needed, 4 label scans: no sample read.
		if n > 6 {
			t.Errorf("REST: %d statements before the refusal", n)
		}
		// 781 samples of the same 32 series fit.
		path = strings.Replace(path, "numberOfSamples=1000", "numberOfSamples=781", 1)
		if status, body := env.Do(http.MethodGet, path, "acme-workloads", nil, nil); status != 200 {
			t.Errorf("781 samples: %d %.300s", status, body)
		}
		r := env.GraphQL("acme-workloads", `{ podMetrics(workloadId: "`+servertest.TrainWorkload+`", podId: "`+servertest.TrainPod1+`", metricTypes: [`+strings.Join(types, ", ")+`, GPU_UTILIZATION],
			numberOfSamples: 1000, start: "2025-01-01T00:00:00Z", end: "2025-01-02T00:00:00Z") { omittedTypes } }`, nil)
		if len(r.Errors) != 1 || !strings.HasPrefix(r.Errors[0].Message, "this request would read 32 series at 1000 samples each") || r.Code() != "BAD_REQUEST" {
			t.Errorf("GraphQL: %d %+v", r.Status, r.Errors)
		}
	})
}
