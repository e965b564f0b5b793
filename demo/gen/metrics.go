package main

import (
	"math"
	"strconv"
	"time"
)

// A day of samples every five minutes, the newest at the anchor: enough to
// try numberOfSamples and the 5-minute lookback without a large file.
const (
	sampleStep  = 5 * time.Minute
	sampleCount = 288
)

const gib = 1 << 30

func sampleTimes() []time.Time {
	ts := make([]time.Time, sampleCount)
	for i := range ts {
		ts[i] = anchor.Add(-time.Duration(sampleCount-1-i) * sampleStep)
	}
	return ts
}

func (g *gen) addMetrics() {
	for _, ref := range []struct{ workload, pod string }{
		{"llama3-70b-pretrain", "llama3-70b-pretrain-master-0"},
		{"llama3-70b-pretrain", "llama3-70b-pretrain-worker-0"},
		{"resnet152-imagenet", "resnet152-imagenet-master-0"},
		{"esm2-finetune", "esm2-finetune-master-0"},
	} {
		g.trainingMetrics(g.livePod(ref.workload, ref.pod))
	}
	for _, p := range g.servingPods("llama-3-70b-chat", 2) {
		g.servingMetrics(p)
	}
}

// livePod finds the current (not deleted) pod of that name.
func (g *gen) livePod(workload, name string) *Pod {
	for _, p := range g.f.Pods {
		if p.WorkloadName == workload && p.Name == name && p.DeletedAt == nil {
			return p
		}
	}
	panic("no live pod " + name)
}

// servingPods are the first n running replicas of the newest revision.
func (g *gen) servingPods(workload string, n int) []*Pod {
	var out []*Pod
	for _, p := range g.f.Pods {
		if p.WorkloadName == workload && p.DeletedAt == nil && p.K8sPhase == "Running" && len(out) < n {
			out = append(out, p)
		}
	}
	return out
}

func (g *gen) series(p *Pod, typ string, labels map[string]string, value func(i int, t time.Time) string) {
	s := MetricSeries{PodID: p.ID, Type: typ, Labels: labels}
	for i, t := range sampleTimes() {
		s.Samples = append(s.Samples, [2]string{secTime(t), value(i, t)})
	}
	g.f.PodMetrics = append(g.f.PodMetrics, s)
}

func gpuLabel(i int) map[string]string { return map[string]string{"gpu": strconv.Itoa(i)} }

// trainingMetrics: GPUs busy in the 90s with a dip at each two-hourly
// checkpoint, memory nearly full and steady, a data loader's worth of CPU.
func (g *gen) trainingMetrics(p *Pod) {
	memGb := g.models[g.podFacts[p].model].MemoryGb
	checkpoint := func(i int) bool { return i%24 == 11 }
	for gpu := range g.podFacts[p].gpus {
		base := 90 + g.rng.Float64()*5
		g.series(p, "GPU_UTILIZATION_PER_GPU", gpuLabel(gpu), func(i int, _ time.Time) string {
			if checkpoint(i) {
				return decimal(15+g.rng.Float64()*15, 1)
			}
			return decimal(min(100, base+g.rng.NormFloat64()*2.5), 1)
		})
		used := float64(memGb) * (0.86 + g.rng.Float64()*0.07) * gib
		g.series(p, "GPU_MEMORY_USAGE_BYTES_PER_GPU", gpuLabel(gpu), func(int, time.Time) string {
			return integer(used + g.rng.NormFloat64()*0.2*gib)
		})
	}
	cores := float64(g.podFacts[p].gpus) * 2.8
	g.series(p, "CPU_USAGE_CORES", nil, func(i int, _ time.Time) string {
		if checkpoint(i) {
			return decimal(cores*1.6, 2) // serialising the checkpoint
		}
		return decimal(cores+g.rng.NormFloat64()*0.8, 2)
	})
	rss := float64(g.podFacts[p].gpus) * 46 * gib
	g.series(p, "CPU_MEMORY_USAGE_BYTES", nil, func(i int, _ time.Time) string {
		return integer(rss + float64(i)*0.01*gib + g.rng.NormFloat64()*0.5*gib)
	})
}

// load is the served model's traffic, 0..1: a day's swing peaking in the
// afternoon UTC, with noise.
func (g *gen) load(t time.Time) float64 {
	h := float64(t.Hour()) + float64(t.Minute())/60
	return math.Max(0.05, math.Min(1, 0.5+0.4*math.Cos(2*math.Pi*(h-16)/24)+g.rng.NormFloat64()*0.04))
}

// servingMetrics: an inference replica's GPUs, CPU and the NIM series, all
// driven by one traffic curve so they agree with each other.
func (g *gen) servingMetrics(p *Pod) {
	times := sampleTimes()
	loads := make([]float64, len(times))
	for i, t := range times {
		loads[i] = g.load(t)
	}
	memGb := g.models[g.podFacts[p].model].MemoryGb
	for gpu := range g.podFacts[p].gpus {
		g.series(p, "GPU_UTILIZATION_PER_GPU", gpuLabel(gpu), func(i int, _ time.Time) string {
			return decimal(min(100, 20+75*loads[i]+g.rng.NormFloat64()*3), 1)
		})
		// vLLM reserves 90% of GPU memory for weights and KV cache at start.
		used := float64(memGb) * 0.9 * gib
		g.series(p, "GPU_MEMORY_USAGE_BYTES_PER_GPU", gpuLabel(gpu), func(int, time.Time) string {
			return integer(used + g.rng.Float64()*0.05*gib)
		})
	}
	g.series(p, "CPU_USAGE_CORES", nil, func(i int, _ time.Time) string {
		return decimal(1.5+4*loads[i]+g.rng.NormFloat64()*0.2, 2)
	})
	g.series(p, "CPU_MEMORY_USAGE_BYTES", nil, func(i int, _ time.Time) string {
		return integer(38*gib + loads[i]*4*gib)
	})

	requests := make([]int, len(times))
	for i := range times {
		requests[i] = int(300 + 1200*loads[i] + g.rng.NormFloat64()*40)
	}
	g.series(p, "NIM_NUM_REQUESTS_RUNNING", nil, func(i int, _ time.Time) string { return integer(48 * loads[i]) })
	g.series(p, "NIM_NUM_REQUESTS_WAITING", nil, func(i int, _ time.Time) string { return integer(math.Max(0, (loads[i]-0.8)*60)) })
	g.series(p, "NIM_NUM_REQUEST_MAX", nil, func(int, time.Time) string { return "256" })
	// The totals are counters since the replica started a day before the window.
	success, failure := 1_150_000.0+float64(g.rng.IntN(20000)), 1900.0+float64(g.rng.IntN(200))
	g.series(p, "NIM_REQUEST_SUCCESS_TOTAL", nil, func(i int, _ time.Time) string {
		success += float64(requests[i]) * 0.998
		return integer(success)
	})
	g.series(p, "NIM_REQUEST_FAILURE_TOTAL", nil, func(i int, _ time.Time) string {
		failure += float64(requests[i]) * 0.002
		return integer(failure)
	})
	g.series(p, "NIM_GPU_CACHE_USAGE_PERC", nil, func(i int, _ time.Time) string {
		return decimal(math.Min(0.99, 0.15+0.75*loads[i]), 4)
	})

	// Latencies grow with load; each window's histogram counts its requests.
	ttft := []string{"0.001", "0.005", "0.01", "0.05", "0.1", "0.5", "1.0", "2.0"}
	e2e := []string{"0.25", "0.5", "1.0", "2.5", "5.0", "10.0", "20.0", "40.0"}
	g.histogram(p, "NIM_TIME_TO_FIRST_TOKEN_SECONDS", ttft, requests, func(i int) (float64, float64) {
		return 0.045 * (1 + 2*loads[i]), 0.9
	})
	g.histogram(p, "NIM_E2E_REQUEST_LATENCY_SECONDS", e2e, requests, func(i int) (float64, float64) {
		return 1.6 * (1 + loads[i]), 0.6
	})
}

// histogram writes cumulative counts of a log-normal latency with the given
// median and shape per window, "+Inf" last holding every request.
func (g *gen) histogram(p *Pod, typ string, bounds []string, requests []int, dist func(i int) (median, sigma float64)) {
	h := HistogramSeries{PodID: p.ID, Type: typ}
	for i, t := range sampleTimes() {
		median, sigma := dist(i)
		n := float64(requests[i])
		var b Buckets
		for _, bound := range bounds {
			x := must(strconv.ParseFloat(bound, 64))
			cdf := 0.5 * math.Erfc(-(math.Log(x)-math.Log(median))/(sigma*math.Sqrt2))
			b = append(b, Bucket{Bound: bound, Count: strconv.Itoa(int(math.Round(n * cdf)))})
		}
		b = append(b, Bucket{Bound: "+Inf", Count: strconv.Itoa(requests[i])})
		h.Samples = append(h.Samples, HistogramSample{Timestamp: Instant(secTime(t)), Buckets: b})
	}
	g.f.PodHistograms = append(g.f.PodHistograms, h)
}

func decimal(v float64, places int) string {
	return strconv.FormatFloat(math.Max(0, v), 'f', places, 64)
}

func integer(v float64) string { return strconv.FormatInt(int64(math.Round(math.Max(0, v))), 10) }
