package podmetrics_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

func TestIngestSamples(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, servertest.Base)
		batch := `{
		  "podMetrics": [
		    {"podId": "` + servertest.TrainPod1 + `", "type": "GPU_UTILIZATION_PER_GPU", "labels": {"gpu": "0"},
		     "samples": [["2025-02-01T10:00:00.000Z", "85"], ["2025-02-01T10:00:30.250Z", "92.5"]]},
		    {"podId": "` + servertest.TrainPod1 + `", "type": "CPU_USAGE_CORES", "labels": {},
		     "samples": [["2025-02-01T10:00:00+02:00", "3"]]}
		  ],
		  "podHistograms": [
		    {"podId": "` + servertest.ServePod0 + `", "type": "NIM_TIME_TO_FIRST_TOKEN_SECONDS",
		     "samples": [{"timestamp": "2025-02-01T10:00:00.000Z", "buckets": {"0.5": "3", "+Inf": "4"}}]}
		  ]
		}`
		status, body := env.Do(http.MethodPost, servertest.SamplesPath, "acme-metrics", []byte(batch), nil)
		if status != http.StatusOK || servertest.Compact(t, body) != `{"histogramSamples":1,"samples":3}` {
			t.Fatalf("%d %s", status, body)
		}
		// Read back through the API: raw samples, the +02:00 one in UTC.
		got := servertest.GetMetrics(t, env, http.StatusOK, servertest.MetricsPath(servertest.TrainWorkload, servertest.TrainPod1, "metricType", "GPU_UTILIZATION_PER_GPU,CPU_USAGE_CORES",
			"start", "2025-02-01T07:00:00.000Z", "end", "2025-02-01T11:00:00.000Z", "numberOfSamples", "0"))
		want := servertest.JS(`{'measurements': [
			{'type': 'GPU_UTILIZATION_PER_GPU', 'labels': {'gpu': '0'}, 'values': [
				{'value': '85', 'timestamp': '2025-02-01T10:00:00.000Z'}, {'value': '92.5', 'timestamp': '2025-02-01T10:00:30.250Z'}]},
			{'type': 'CPU_USAGE_CORES', 'labels': {}, 'values': [{'value': '3', 'timestamp': '2025-02-01T08:00:00.000Z'}]}]}`)
		if got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
		got = servertest.GetMetrics(t, env, http.StatusOK, servertest.MetricsPath(servertest.ServeWorkload, servertest.ServePod0, "metricType", "NIM_TIME_TO_FIRST_TOKEN_SECONDS_PERCENTILES",
			"start", "2025-02-01T10:00:00.000Z", "end", "2025-02-01T10:01:00.000Z", "numberOfSamples", "1"))
		// 4 observations; p50 rank 2 in (0, 0.5]: 0.5·2/3; p90 and p99 in +Inf: 0.5.
		want = servertest.JS(`{'measurements': [], 'histogram': [{'type': 'NIM_TIME_TO_FIRST_TOKEN_SECONDS_PERCENTILES', 'values': [
			{'timestamp': '2025-02-01T10:01:00.000Z', 'data': {'p50': '0.33333333333333', 'p90': '0.5', 'p99': '0.5'}}]}]}`)
		if got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}

		// Sending the batch again replaces the same rows.
		before := storetest.Count(t, st, "metric_samples", "")
		if status, body := env.Do(http.MethodPost, servertest.SamplesPath, "acme-metrics", []byte(strings.Replace(batch, `"92.5"`, `"93"`, 1)), nil); status != http.StatusOK {
			t.Fatalf("resend: %d %s", status, body)
		}
		if after := storetest.Count(t, st, "metric_samples", ""); after != before {
			t.Errorf("resend: %d rows, then %d", before, after)
		}
		var v float64
		storetest.Scan(t, st, &v, "SELECT value FROM metric_samples WHERE pod_id = ? AND type = ? AND ts = ?", servertest.TrainPod1, "GPU_UTILIZATION_PER_GPU",
			time.Date(2025, 2, 1, 10, 0, 30, 250e6, time.UTC))
		if v != 93 {
			t.Errorf("resent value = %v", v)
		}
	})
}

// A batch of 10,000 samples goes in one request.
func TestIngestLargeBatch(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, servertest.Base)
		type series struct {
			PodID   string            `json:"podId"`
			Type    string            `json:"type"`
			Labels  map[string]string `json:"labels"`
			Samples [][2]string       `json:"samples"`
		}
		var batch struct {
			PodMetrics []series `json:"podMetrics"`
		}
		t0 := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
		for g := range 4 {
			s := series{PodID: servertest.TrainPod1, Type: "GPU_UTILIZATION_PER_GPU", Labels: map[string]string{"gpu": fmt.Sprint(g)}}
			for i := range 2500 {
				s.Samples = append(s.Samples, [2]string{t0.Add(time.Duration(i) * 10 * time.Second).Format(time.RFC3339), fmt.Sprint(i % 100)})
			}
			batch.PodMetrics = append(batch.PodMetrics, s)
		}
		body, _ := json.Marshal(batch)
		status, resp := env.Do(http.MethodPost, servertest.SamplesPath, "acme-metrics", body, nil)
		if status != http.StatusOK || servertest.Compact(t, resp) != `{"histogramSamples":0,"samples":10000}` {
			t.Fatalf("%d %s", status, resp)
		}
		if n := storetest.Count(t, st, "metric_samples", ""); n != 10000+2 { // Base holds 2
			t.Errorf("%d rows", n)
		}
		// The mean of four equal GPUs at the last sample (2499 % 100 = 99).
		got := servertest.GetMetrics(t, env, http.StatusOK, servertest.MetricsPath(servertest.TrainWorkload, servertest.TrainPod1, "metricType", "GPU_UTILIZATION",
			"start", "2025-03-01T00:00:00.000Z", "end", t0.Add(2499*10*time.Second).Format(time.RFC3339), "numberOfSamples", "1"))
		if want := servertest.JS(`{'measurements': [{'type': 'GPU_UTILIZATION', 'labels': {}, 'values': [{'value': '99', 'timestamp': '2025-03-01T06:56:30.000Z'}]}]}`); got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	})
}

func TestIngestRefusesWholeBatch(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, servertest.Base)
		good := `{"podId": "` + servertest.TrainPod1 + `", "type": "CPU_USAGE_CORES", "samples": [["2025-02-01T10:00:00.000Z", "1"]]}`
		goodHist := `{"podId": "` + servertest.ServePod0 + `", "type": "NIM_E2E_REQUEST_LATENCY_SECONDS", "samples": [{"timestamp": "2025-02-01T10:00:00.000Z", "buckets": {"+Inf": "1"}}]}`
		entry := func(pod, typ, labels, ts, value string) string {
			return `{"podId": "` + pod + `", "type": "` + typ + `", "labels": ` + labels + `, "samples": [["2025-02-01T10:00:00.000Z", "1"], ["` + ts + `", "` + value + `"]]}`
		}
		hist := func(buckets string) string {
			return `{"podId": "` + servertest.ServePod0 + `", "type": "NIM_E2E_REQUEST_LATENCY_SECONDS", "samples": [{"timestamp": "2025-02-01T10:00:00.000Z", "buckets": ` + buckets + `}]}`
		}
		metrics := func(entries ...string) string {
			return `{"podMetrics": [` + strings.Join(entries, ", ") + `], "podHistograms": [` + goodHist + `]}`
		}
		const row1 = `podMetrics[1] (pod "` + servertest.TrainPod1 + `", type "GPU_UTILIZATION_PER_GPU")`
		for _, tc := range []struct {
			name, body, msg string
		}{
			{"bad value", metrics(good, entry(servertest.TrainPod1, "GPU_UTILIZATION_PER_GPU", `{"gpu": "0"}`, "2025-02-01T10:00:01.000Z", "high")),
				row1 + `.samples[1]: value "high" is not a number`},
			{"NaN", metrics(good, entry(servertest.TrainPod1, "GPU_UTILIZATION_PER_GPU", `{"gpu": "0"}`, "2025-02-01T10:00:01.000Z", "NaN")),
				row1 + `.samples[1]: value "NaN" is not a finite number`},
			{"bad timestamp", metrics(good, entry(servertest.TrainPod1, "GPU_UTILIZATION_PER_GPU", `{"gpu": "0"}`, "2025-02-01 10:00:01", "1")),
				row1 + `.samples[1]: timestamp: "2025-02-01 10:00:01" is not an ISO 8601 instant with a zone (e.g. 2023-06-06T12:09:18.211Z)`},
			{"same millisecond twice", metrics(good, entry(servertest.TrainPod1, "GPU_UTILIZATION_PER_GPU", `{"gpu": "0"}`, "2025-02-01T10:00:00.0004Z", "1")),
				row1 + `.samples[1]: the same series and timestamp as ` + row1 + `.samples[0]`},
			{"per-GPU type without gpu label", metrics(good, entry(servertest.TrainPod1, "GPU_UTILIZATION_PER_GPU", `{}`, "2025-02-01T10:00:01.000Z", "1")),
				row1 + `: a _PER_GPU series needs a "gpu" label (e.g. {"gpu": "0"})`},
			{"unknown type", metrics(good, entry(servertest.TrainPod1, "GPU_TEMPERATURE", `{}`, "2025-02-01T10:00:01.000Z", "1")),
				`podMetrics[1] (pod "` + servertest.TrainPod1 + `", type "GPU_TEMPERATURE"): type "GPU_TEMPERATURE" is not a sampled pod metric type`},
			{"percentiles are computed, not stored", metrics(good, entry(servertest.TrainPod1, "NIM_E2E_REQUEST_LATENCY_SECONDS_PERCENTILES", `{}`, "2025-02-01T10:00:01.000Z", "1")),
				`podMetrics[1] (pod "` + servertest.TrainPod1 + `", type "NIM_E2E_REQUEST_LATENCY_SECONDS_PERCENTILES"): type "NIM_E2E_REQUEST_LATENCY_SECONDS_PERCENTILES" is not a sampled pod metric type`},
			{"unknown pod", metrics(good, entry("nope", "GPU_UTILIZATION_PER_GPU", `{"gpu": "0"}`, "2025-02-01T10:00:01.000Z", "1")),
				`podMetrics[1] (pod "nope", type "GPU_UTILIZATION_PER_GPU"): podId "nope" names no pod of this key's tenant`},
			{"another tenant's pod", metrics(good, entry(servertest.GlobexPod0, "GPU_UTILIZATION_PER_GPU", `{"gpu": "0"}`, "2025-02-01T10:00:01.000Z", "1")),
				`podMetrics[1] (pod "` + servertest.GlobexPod0 + `", type "GPU_UTILIZATION_PER_GPU"): podId "` + servertest.GlobexPod0 + `" names no pod of this key's tenant`},
			{"no +Inf bucket", `{"podMetrics": [` + good + `], "podHistograms": [` + goodHist + `, ` + hist(`{"0.5": "1"}`) + `]}`,
				`podHistograms[1] (pod "` + servertest.ServePod0 + `", type "NIM_E2E_REQUEST_LATENCY_SECONDS").samples[0]: buckets lack the "+Inf" bucket`},
			{"buckets not cumulative", `{"podMetrics": [` + good + `], "podHistograms": [` + goodHist + `, ` + hist(`{"0.5": "3", "1": "2", "+Inf": "4"}`) + `]}`,
				`podHistograms[1] (pod "` + servertest.ServePod0 + `", type "NIM_E2E_REQUEST_LATENCY_SECONDS").samples[0]: bucket 1 counts 2, fewer than bucket 0.5 below it (3): counts are cumulative`},
			{"a bound spelt twice", `{"podMetrics": [` + good + `], "podHistograms": [` + goodHist + `, ` + hist(`{"1": "3", "1.0": "3", "+Inf": "4"}`) + `]}`,
				`podHistograms[1] (pod "` + servertest.ServePod0 + `", type "NIM_E2E_REQUEST_LATENCY_SECONDS").samples[0]: bucket bound 1 is given twice`},
			{"malformed entry", metrics(good, `{"podId": "x", "samples": [["2025-02-01T10:00:00.000Z", 1]]}`),
				`podMetrics[1].samples[0][1]: want a string, got number`},
			{"unknown field", `{"podMetrics": [` + good + `], "pods": []}`,
				`the body is not a batch of samples ({"podMetrics": [...], "podHistograms": [...]}): unknown field "pods"`},
			{"unknown field of an entry", metrics(good, `{"podId": "x", "type": "CPU_USAGE_CORES", "sample": []}`),
				`podMetrics[1]: unknown field "sample"`},
			{"a sample of three", metrics(good, `{"podId": "x", "type": "CPU_USAGE_CORES", "samples": [["2025-02-01T10:00:00.000Z", "1", "2"]]}`),
				`podMetrics[1].samples[0]: want an array of 2, got array: too many array elements`},
			// Issue 23, finding 12: what encoding/json let through.
			{"a section twice", `{"podMetrics": [` + good + `], "podMetrics": []}`,
				`podMetrics is given twice: a name appears at most once in an object`},
			{"a field twice", metrics(good, `{"podId": "x", "podId": "`+servertest.TrainPod1+`", "type": "CPU_USAGE_CORES", "samples": [["2025-02-01T10:00:00.000Z", "1"]]}`),
				`podMetrics[1].podId is given twice: a name appears at most once in an object`},
			{"a label twice", metrics(good, entry(servertest.TrainPod1, "GPU_UTILIZATION_PER_GPU", `{"gpu": "0", "gpu": "1"}`, "2025-02-01T10:00:01.000Z", "1")),
				`podMetrics[1].labels.gpu is given twice: a name appears at most once in an object`},
			{"a field in another case", metrics(good, `{"podId": "`+servertest.TrainPod1+`", "Type": "CPU_USAGE_CORES", "samples": [["2025-02-01T10:00:00.000Z", "1"]]}`),
				`podMetrics[1]: unknown field "Type"`},
			{"trailing data", metrics(good) + ` {}`, `the body holds data after the batch, which ends at byte 337`},
			{"a brace too many", metrics(good) + `}`, `the body holds data after the batch, which ends at byte 337`},
			{"truncated", `{"podMetrics": [` + good, `the body ends before its JSON value does`},
			{"not an object", `[]`, `the body is not a batch of samples ({"podMetrics": [...], "podHistograms": [...]}): it is a JSON [`},
			{"empty batch", `{}`, `the batch is empty: send podMetrics and/or podHistograms entries`},
		} {
			status, body := env.Do(http.MethodPost, servertest.SamplesPath, "acme-metrics", []byte(tc.body), nil)
			var got struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			}
			_ = json.Unmarshal(body, &got)
			if status != http.StatusBadRequest || got.Code != 400 || got.Message != tc.msg {
				t.Errorf("%s: %d %s\nwant 400 %s", tc.name, status, body, tc.msg)
			}
			// Nothing of a refused batch is written: not its good entries either.
			if m, h := storetest.Count(t, st, "metric_samples", ""), storetest.Count(t, st, "histogram_samples", ""); m != 2 || h != 1 {
				t.Errorf("%s: %d samples and %d histograms stored, want Base's 2 and 1", tc.name, m, h)
			}
		}
	})
}

func TestIngestAuth(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, servertest.Base)
		body := []byte(`{"podMetrics": [{"podId": "` + servertest.TrainPod1 + `", "type": "CPU_USAGE_CORES", "samples": [["2025-02-01T10:00:00.000Z", "1"]]}]}`)
		for token, want := range map[string]int{"": http.StatusUnauthorized, "acme-workloads": http.StatusForbidden, "acme-operator": http.StatusForbidden} {
			if status, resp := env.Do(http.MethodPost, servertest.SamplesPath, token, body, nil); status != want {
				t.Errorf("%q: %d %s, want %d", token, status, resp, want)
			}
		}
		if storetest.Count(t, st, "metric_samples", "") != 2 {
			t.Error("a refused request wrote samples")
		}
	})
}
