package promsource_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/lib/timeseries"
	"gpugraph/internal/services"
	"gpugraph/internal/services/podmetrics"
	"gpugraph/internal/services/promsource"
	"gpugraph/internal/services/promsource/promtest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// twinSamples writes the same readings twice: as the exporters expose them
// (OpenMetrics for promtool's backfill: DCGM exporter's names, MiB and
// ratios, cAdvisor's CPU-seconds counter, NIM's names) and as Run:ai's
// types (an ingestion batch for the built-in store: bytes, percentages,
// cores). The pods are the Base fixture's resnet-train-1 (two GPUs on
// gpu-node-2) and llm-serve-0 (NIM), both of project vision, so in
// namespace runai-vision.
type twinSamples struct {
	om      map[string][]string // metric name → OpenMetrics lines
	batch   []map[string]any    // podMetrics entries
	hist    []map[string]any    // podHistograms entries
	t0      time.Time
	every   time.Duration
	samples int
}

func (w *twinSamples) add(name, labels string, t time.Time, v string) {
	w.om[name] = append(w.om[name], fmt.Sprintf("%s{%s} %s %d.%03d", name, labels, v, t.Unix(), t.Nanosecond()/1e6))
}

func (w *twinSamples) store(pod, typ string, labels map[string]string, samples [][2]string) {
	if len(samples) > 0 {
		w.batch = append(w.batch, map[string]any{"podId": pod, "type": typ, "labels": labels, "samples": samples})
	}
}

func (w *twinSamples) openMetrics() string {
	names := make([]string, 0, len(w.om))
	for n := range w.om {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		// Samples of one series must be in time order; lines were added
		// series by series, so a stable sort by labels keeps that.
		lines := w.om[n]
		sort.SliceStable(lines, func(i, j int) bool { return labelsOf(lines[i]) < labelsOf(lines[j]) })
		for _, l := range lines {
			b.WriteString(l + "\n")
		}
	}
	b.WriteString("# EOF\n")
	return b.String()
}

func labelsOf(line string) string { return line[:strings.Index(line, "}")] }

func ts(t time.Time) string { return models.FormatTime(t) }

// newTwins generates 80 readings 15 s apart from t0, with a gap of more
// than the 5-minute lookback on GPU 1's utilisation, so some steps are
// empty for one GPU only.
func newTwins() *twinSamples {
	r := rand.New(rand.NewSource(13))
	w := &twinSamples{om: map[string][]string{}, t0: time.Date(2025, 2, 1, 10, 0, 0, 123e6, time.UTC), every: 15 * time.Second, samples: 80}
	const ns = `namespace="runai-vision"`
	train := `pod="resnet-train-1"`
	serve := `pod="llm-serve-0"`
	at := func(i int) time.Time { return w.t0.Add(time.Duration(i) * w.every) }
	dcgm := func(g int) string {
		return fmt.Sprintf(`gpu="%d",UUID="GPU-%d",device="nvidia%d",modelName="NVIDIA H100 80GB HBM3",Hostname="gpu-node-2",container="main",%s,%s`, g, g, g, ns, train)
	}
	gpuLabel := func(g int) map[string]string { return map[string]string{"gpu": fmt.Sprint(g)} }

	for g := 0; g < 2; g++ {
		var util, mem, nvtx, nvrx, nvtot [][2]string
		acts := map[string][][2]string{}
		for i := 0; i < w.samples; i++ {
			t := at(i)
			if !(g == 1 && i >= 20 && i < 50) {
				u := fmt.Sprintf("%.1f", 40+r.Float64()*60)
				w.add("DCGM_FI_DEV_GPU_UTIL", dcgm(g), t, u)
				util = append(util, [2]string{ts(t), u})
			}
			mib := 20000 + r.Intn(60000)
			w.add("DCGM_FI_DEV_FB_USED", dcgm(g), t, fmt.Sprint(mib))
			mem = append(mem, [2]string{ts(t), fmt.Sprint(int64(mib) * 1048576)})
			for _, a := range []struct{ dcgm, typ string }{
				{"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "GPU_GRAPHICS_ENGINE_ACTIVITY_PER_GPU"},
				{"DCGM_FI_PROF_SM_ACTIVE", "GPU_SM_ACTIVITY_PER_GPU"},
				{"DCGM_FI_PROF_SM_OCCUPANCY", "GPU_SM_OCCUPANCY_PER_GPU"},
				{"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "GPU_TENSOR_ACTIVITY_PER_GPU"},
				{"DCGM_FI_PROF_PIPE_FP64_ACTIVE", "GPU_FP64_ENGINE_ACTIVITY_PER_GPU"},
				{"DCGM_FI_PROF_PIPE_FP32_ACTIVE", "GPU_FP32_ENGINE_ACTIVITY_PER_GPU"},
				{"DCGM_FI_PROF_PIPE_FP16_ACTIVE", "GPU_FP16_ENGINE_ACTIVITY_PER_GPU"},
				{"DCGM_FI_PROF_DRAM_ACTIVE", "GPU_MEMORY_BANDWIDTH_UTILIZATION_PER_GPU"},
				{"DCGM_FI_PROF_PCIE_TX_BYTES", "GPU_PCIE_TRANSMITTED_BANDWIDTH_PER_GPU"},
				{"DCGM_FI_PROF_PCIE_RX_BYTES", "GPU_PCIE_RECEIVED_BANDWIDTH_PER_GPU"},
			} {
				if strings.Contains(a.dcgm, "PCIE") {
					v := fmt.Sprint(r.Int63n(30e9))
					w.add(a.dcgm, dcgm(g), t, v)
					acts[a.typ] = append(acts[a.typ], [2]string{ts(t), v})
					continue
				}
				ratio := float64(r.Intn(1000)) / 1000 // DCGM's 0–1 ratio, three decimals
				w.add(a.dcgm, dcgm(g), t, fmt.Sprintf("%.3f", ratio))
				acts[a.typ] = append(acts[a.typ], [2]string{ts(t), fmt.Sprintf("%.1f", ratio*100)})
			}
			tx, rx := r.Int63n(400e9), r.Int63n(400e9)
			w.add("DCGM_FI_PROF_NVLINK_TX_BYTES", dcgm(g), t, fmt.Sprint(tx))
			w.add("DCGM_FI_PROF_NVLINK_RX_BYTES", dcgm(g), t, fmt.Sprint(rx))
			nvtx = append(nvtx, [2]string{ts(t), fmt.Sprint(tx)})
			nvrx = append(nvrx, [2]string{ts(t), fmt.Sprint(rx)})
			nvtot = append(nvtot, [2]string{ts(t), fmt.Sprint(tx + rx)})
		}
		w.store(servertest.TrainPod1, "GPU_UTILIZATION_PER_GPU", gpuLabel(g), util)
		w.store(servertest.TrainPod1, "GPU_MEMORY_USAGE_BYTES_PER_GPU", gpuLabel(g), mem)
		w.store(servertest.TrainPod1, "GPU_NVLINK_TRANSMITTED_BANDWIDTH_PER_GPU", gpuLabel(g), nvtx)
		w.store(servertest.TrainPod1, "GPU_NVLINK_RECEIVED_BANDWIDTH_PER_GPU", gpuLabel(g), nvrx)
		w.store(servertest.TrainPod1, "NVLINK_BANDWIDTH_TOTAL_PER_GPU", gpuLabel(g), nvtot)
		for typ, s := range acts {
			w.store(servertest.TrainPod1, typ, gpuLabel(g), s)
		}
	}

	// cAdvisor: CPU seconds counters of two containers (and the pod-level
	// and pause series, which the mapping leaves out); cores are multiples
	// of 1/4 so counters and irate are exact in binary.
	var cores, mem [][2]string
	var cMain, cSide float64
	for i := 0; i < w.samples; i++ {
		t := at(i)
		a, b := float64(r.Intn(32))/4, float64(r.Intn(8))/4
		if i > 0 {
			cMain += a * w.every.Seconds()
			cSide += b * w.every.Seconds()
			cores = append(cores, [2]string{ts(t), timeseries.FormatValue(a + b)})
		}
		for c, v := range map[string]float64{"main": cMain, "sidecar": cSide, "": cMain + cSide, "POD": 0.5 * float64(i)} {
			w.add("container_cpu_usage_seconds_total", fmt.Sprintf(`container="%s",%s,%s`, c, ns, train), t, timeseries.FormatValue(v))
		}
		m1, m2 := r.Int63n(64<<30), r.Int63n(1<<30)
		for c, v := range map[string]int64{"main": m1, "sidecar": m2, "": m1 + m2 + 4096, "POD": 1 << 20} {
			w.add("container_memory_working_set_bytes", fmt.Sprintf(`container="%s",%s,%s`, c, ns, train), t, fmt.Sprint(v))
		}
		mem = append(mem, [2]string{ts(t), fmt.Sprint(m1 + m2)})
	}
	w.store(servertest.TrainPod1, "CPU_USAGE_CORES", map[string]string{}, cores)
	w.store(servertest.TrainPod1, "CPU_MEMORY_USAGE_BYTES", map[string]string{}, mem)

	// NIM on llm-serve-0.
	nimLabels := fmt.Sprintf(`model_name="meta/llama-3.1-8b-instruct",%s,%s`, ns, serve)
	gauges := map[string]string{"num_requests_running": "NIM_NUM_REQUESTS_RUNNING", "num_requests_waiting": "NIM_NUM_REQUESTS_WAITING",
		"num_request_max": "NIM_NUM_REQUEST_MAX", "request_success_total": "NIM_REQUEST_SUCCESS_TOTAL",
		"request_failure_total": "NIM_REQUEST_FAILURE_TOTAL", "gpu_cache_usage_perc": "NIM_GPU_CACHE_USAGE_PERC"}
	for name, typ := range gauges {
		var s [][2]string
		total := 0
		for i := 0; i < w.samples; i++ {
			t := at(i)
			var v string
			switch {
			case strings.HasSuffix(name, "_total"):
				total += r.Intn(50)
				v = fmt.Sprint(total)
			case name == "gpu_cache_usage_perc":
				v = fmt.Sprintf("%.3f", r.Float64())
			default:
				v = fmt.Sprint(r.Intn(64))
			}
			w.add(name, nimLabels, t, v)
			s = append(s, [2]string{ts(t), v})
		}
		w.store(servertest.ServePod0, typ, map[string]string{}, s)
	}
	bounds := []string{"0.01", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "+Inf"}
	for name, typ := range map[string]string{"time_to_first_token_seconds": "NIM_TIME_TO_FIRST_TOKEN_SECONDS", "e2e_request_latency_seconds": "NIM_E2E_REQUEST_LATENCY_SECONDS"} {
		counts := make([]int, len(bounds))
		var samples []map[string]any
		for i := 0; i < w.samples; i++ {
			t := at(i)
			buckets := map[string]string{}
			cum := 0
			for k, le := range bounds {
				counts[k] += r.Intn(10)
				cum += counts[k]
				_ = k
				buckets[le] = fmt.Sprint(cum)
			}
			samples = append(samples, map[string]any{"timestamp": ts(t), "buckets": buckets})
		}
		for _, le := range bounds {
			for i, s := range samples {
				w.add(name+"_bucket", fmt.Sprintf(`%s,le="%s"`, nimLabels, le), at(i), s["buckets"].(map[string]string)[le])
			}
		}
		w.hist = append(w.hist, map[string]any{"podId": servertest.ServePod0, "type": typ, "samples": samples})
	}
	return w
}

// mappedTypes are the types the default mapping reads.
func mappedTypes(t *testing.T) []string {
	m, err := promsource.DefaultMapping()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, typ := range models.MetricTypes {
		if m.Types[typ].Query != "" {
			out = append(out, typ)
		}
	}
	return out
}

// TestPrometheusMatchesStore is issue 13's point-for-point test: the same
// readings backfilled into a real Prometheus and ingested into the
// built-in store give byte-identical REST answers (JSON and CSV) and
// GraphQL answers for every type the default mapping reads, aggregates
// and percentiles included. No tolerance is applied: both sides print
// values through timeseries.FormatValue (14 significant digits), which is
// where the float noise of Prometheus's arithmetic (the ×100 of DCGM's
// ratios, avg without compensation, irate's division) is absorbed; the
// readings are chosen so that no value sits on a rounding edge (ratios of
// three decimals, cores in quarters).
func TestPrometheusMatchesStore(t *testing.T) {
	t.Parallel() // the slowest of the package: they overlap each other (own servers, stores and ports)
	w := newTwins()
	prom := promtest.Start(t, promtest.Options{OpenMetrics: w.openMetrics()})
	src, err := promsource.New(promsource.Config{BaseURL: prom.URL})
	if err != nil {
		t.Fatal(err)
	}
	last := w.t0.Add(time.Duration(w.samples-1) * w.every)
	ranges := []struct {
		start, end time.Time
		n          int
	}{
		{w.t0.Add(-2 * time.Minute), last.Add(3 * time.Minute), 20}, // starts before the data, ends in the lookback
		{w.t0.Add(47 * time.Second), last, 137},                     // a step that does not divide evenly
		{w.t0, last.Add(time.Second), 1},                            // one point, at end
		{w.t0.Add(5*time.Minute + 7*time.Millisecond), w.t0.Add(9 * time.Minute), 1000},
	}
	types := mappedTypes(t)
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		local := servertest.New(t, st, servertest.Base)
		remote := servertest.NewWithOptions(t, st, "", servertest.Options{Services: services.Config{Metrics: src}}, servertest.Config{})
		body, _ := json.Marshal(map[string]any{"podMetrics": w.batch, "podHistograms": w.hist})
		if status, b := local.Do(http.MethodPost, servertest.SamplesPath, "acme-metrics", body, nil); status != http.StatusOK {
			t.Fatalf("ingest: %d %s", status, b)
		}
		compared := 0
		for _, rg := range ranges {
			checkNoLookbackEdge(t, w, rg.start, rg.end, rg.n)
			for _, pod := range []struct{ wl, id string }{{servertest.TrainWorkload, servertest.TrainPod1}, {servertest.ServeWorkload, servertest.ServePod0}} {
				for _, typ := range types {
					path := servertest.MetricsPath(pod.wl, pod.id, "metricType", typ, "start", ts(rg.start), "end", ts(rg.end),
						"numberOfSamples", fmt.Sprint(rg.n))
					for _, accept := range []string{"application/json", "text/csv"} {
						h := http.Header{"Accept": {accept}}
						ls, lb := local.Do(http.MethodGet, path, "acme-workloads", nil, h)
						rs, rb := remote.Do(http.MethodGet, path, "acme-workloads", nil, h)
						if ls != rs || !bytes.Equal(lb, rb) {
							t.Fatalf("%s %s n=%d (%s):\nstore      %d %s\nprometheus %d %s", pod.id, typ, rg.n, accept, ls, lb, rs, rb)
						}
						if ls == http.StatusOK && accept == "application/json" && bytes.Count(lb, []byte(`"timestamp"`)) > 0 {
							compared++
						}
					}
				}
				// All types of the pod at once, as a client asks them, at
				// a sample count the store's series × samples bound admits
				// (32 series here; a console asks tens of samples). Past
				// it the store refuses before reading, while a Prometheus
				// answers within its own limits (docs/decisions/0011-limits.md).
				n := min(rg.n, podmetrics.MaxSeriesSteps/64)
				path := servertest.MetricsPath(pod.wl, pod.id, "metricType", strings.Join(types, ","), "start", ts(rg.start), "end", ts(rg.end),
					"numberOfSamples", fmt.Sprint(n))
				ls, lb := local.Do(http.MethodGet, path, "acme-workloads", nil, nil)
				rs, rb := remote.Do(http.MethodGet, path, "acme-workloads", nil, nil)
				if ls != rs || !bytes.Equal(lb, rb) {
					t.Fatalf("%s all types n=%d:\nstore      %d %s\nprometheus %d %s", pod.id, n, ls, lb, rs, rb)
				}
			}
		}
		t.Logf("%d answers with points compared byte for byte (JSON), CSV and GraphQL alike", compared)
		if compared < len(types) {
			t.Fatalf("only %d answers with points were compared: the twins do not overlap the ranges", compared)
		}
		// GraphQL: the same field, the same answer.
		q := `query($w: ID!, $p: ID!, $t: [PodMetricType!]!, $s: Time!, $e: Time!) { podMetrics(workloadId: $w, podId: $p, metricTypes: $t, start: $s, end: $e, numberOfSamples: 20) {
			measurements { type labels values { value timestamp } } histogram { type values { timestamp data } } omittedTypes } }`
		for _, pod := range []struct{ wl, id string }{{servertest.TrainWorkload, servertest.TrainPod1}, {servertest.ServeWorkload, servertest.ServePod0}} {
			v := map[string]any{"w": pod.wl, "p": pod.id, "t": types, "s": ts(w.t0), "e": ts(last)}
			l, r := local.GraphQL("acme-workloads", q, v), remote.GraphQL("acme-workloads", q, v)
			if len(l.Errors) > 0 || !bytes.Equal(l.Data, r.Data) || len(r.Errors) > 0 {
				t.Fatalf("GraphQL %s:\nstore      %s %v\nprometheus %s %v", pod.id, l.Data, l.Errors, r.Data, r.Errors)
			}
		}
	})
}

// checkNoLookbackEdge fails when a sample lies exactly 5 minutes before a
// step: Prometheus 2.x includes it, the store (as Prometheus 3) does not.
func checkNoLookbackEdge(t *testing.T, w *twinSamples, start, end time.Time, n int) {
	t.Helper()
	for _, s := range timeseries.Steps(start, end, n) {
		off := s.Add(-timeseries.LookbackDelta).Sub(w.t0)
		if off >= 0 && off%w.every == 0 {
			t.Fatalf("step %s is exactly 5m after a sample: pick another range", ts(s))
		}
	}
}
