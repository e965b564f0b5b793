package promsource_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/services/podmetrics"
	"gpugraph/internal/services/promsource"
	"gpugraph/internal/services/promsource/promtest"
)

var t0 = time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)

// openMetrics is DCGM's GPU utilization of pod resnet-train-0 in project
// vision's namespace, two GPUs every 15 s for 150 s (GPU 0 at 10×i, GPU 1
// at 50), and a pod of the same name in another project's namespace that
// the read must not see.
func openMetrics() string {
	var b strings.Builder
	b.WriteString("# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n")
	for _, s := range []struct {
		labels string
		value  func(i int) int
	}{
		{`gpu="0",namespace="runai-vision",pod="resnet-train-0"`, func(i int) int { return 10 * i }},
		{`gpu="1",namespace="runai-vision",pod="resnet-train-0"`, func(int) int { return 50 }},
		{`gpu="0",namespace="runai-other",pod="resnet-train-0"`, func(int) int { return 99 }},
	} {
		for i := 0; i <= 10; i++ {
			fmt.Fprintf(&b, "DCGM_FI_DEV_GPU_UTIL{%s} %d %d\n", s.labels, s.value(i), t0.Add(time.Duration(i)*15*time.Second).Unix())
		}
	}
	b.WriteString("# EOF\n")
	return b.String()
}

var pod = podmetrics.Pod{ID: "aaaaaaaa-0000-4000-8000-000000000001", Name: "resnet-train-0", ClusterID: "c1", NodeName: "gpu-node-1", Project: "vision"}

func steps(n int, every time.Duration) podmetrics.Range {
	r := podmetrics.Range{Types: []string{"GPU_UTILIZATION_PER_GPU", "GPU_UTILIZATION"}, Start: t0, End: t0.Add(time.Duration(n-1) * every), N: n}
	for i := range n {
		r.Steps = append(r.Steps, t0.Add(time.Duration(i)*every))
	}
	return r
}

func values(m podmetrics.Measurement) string {
	var out []string
	for _, v := range m.Values {
		out = append(out, v.T.UTC().Format("15:04:05")+"="+v.Value)
	}
	return strings.Join(out, " ")
}

// Read asks a real Prometheus the default mapping's queries at the
// range's steps: one measurement per GPU, by index, and their average,
// of the pod's own namespace only.
func TestReadFromPrometheus(t *testing.T) {
	prom := promtest.Start(t, promtest.Options{OpenMetrics: openMetrics()})
	src, err := promsource.New(promsource.Config{BaseURL: prom.URL})
	if err != nil {
		t.Fatal(err)
	}
	if src.Ingests() || src.Name() != "Prometheus at "+prom.URL {
		t.Errorf("Ingests %v, Name %q", src.Ingests(), src.Name())
	}
	res, err := src.Read(context.Background(), pod, steps(3, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Measurements) != 3 || len(res.Omitted) != 0 || res.Histograms != nil {
		t.Fatalf("result: %+v", res)
	}
	for i, want := range []struct{ typ, gpu, values string }{
		{"GPU_UTILIZATION_PER_GPU", "0", "10:00:00=0 10:01:00=40 10:02:00=80"},
		{"GPU_UTILIZATION_PER_GPU", "1", "10:00:00=50 10:01:00=50 10:02:00=50"},
		{"GPU_UTILIZATION", "", "10:00:00=25 10:01:00=45 10:02:00=65"},
	} {
		m := res.Measurements[i]
		if m.Type != want.typ || m.Labels["gpu"] != want.gpu || values(m) != want.values {
			t.Errorf("measurement %d: %s %v %s, want %s gpu %q %s", i, m.Type, m.Labels, values(m), want.typ, want.gpu, want.values)
		}
	}
	if len(res.Measurements[2].Labels) != 0 {
		t.Errorf("GPU_UTILIZATION has labels %v", res.Measurements[2].Labels)
	}

	// A pod of another project has its own namespace's series.
	other := pod
	other.Project = "other"
	res, err = src.Read(context.Background(), other, steps(1, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if got := values(res.Measurements[0]); len(res.Measurements) != 2 || got != "10:00:00=99" || res.Measurements[1].Values[0].Value != "99" {
		t.Errorf("the other project's pod: %+v", res.Measurements)
	}
}

// Every stored sample is the built-in store's to answer; a backend that
// is down or slow is a 503 naming it, without its credentials.
func TestReadRefuses(t *testing.T) {
	down := httptest.NewServer(http.NotFoundHandler())
	base := down.URL
	down.Close()
	src, err := promsource.New(promsource.Config{BaseURL: strings.Replace(base, "http://", "http://ops:s3cret-pw@", 1), Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if src.Name() != "Prometheus at "+base {
		t.Errorf("Name %q shows the credentials or not the backend", src.Name())
	}
	_, err = src.Read(context.Background(), pod, podmetrics.Range{Types: []string{"GPU_UTILIZATION"}, Start: t0, End: t0.Add(time.Minute)})
	e, ok := apierr.As(err)
	if !ok || e.Status != 400 || e.Message != "numberOfSamples=0 (every stored sample) is answered only by the built-in store; this server reads metrics from Prometheus at "+base+": ask for 1 to 1000 samples" {
		t.Errorf("N=0: %v", err)
	}
	_, err = src.Read(context.Background(), pod, steps(2, time.Minute))
	e, ok = apierr.As(err)
	if !ok || e.Status != 503 || e.Code != promsource.UnavailableCode || e.RetryAfter != promsource.RetryAfter ||
		!strings.Contains(e.Message, "Prometheus at "+base) || !strings.Contains(e.Message, "could not be reached") || strings.Contains(e.Message, "s3cret") {
		t.Errorf("down: %+v", e)
	}

	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	defer slow.Close()
	src, err = promsource.New(promsource.Config{BaseURL: slow.URL, Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, err = src.Read(context.Background(), pod, steps(2, time.Minute))
	if e, ok := apierr.As(err); !ok || e.Status != 503 || !strings.Contains(e.Message, "did not answer within 300ms") {
		t.Errorf("slow: %v", err)
	}
}
