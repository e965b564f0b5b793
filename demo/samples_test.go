package demo_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"gpugraph/demo"
	"gpugraph/demo/agents"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// The training pod of the demo README and its GPU 0 utilization series.
const (
	samplesWorkload = "abac6a90-5b54-5000-9b14-72baefd89601"
	samplesPod      = "1fc3994a-2eb2-559c-a87e-c91b75f73ea0"
)

// fixtureValues is GPU 0's utilization series of the training pod as
// demo.json writes it: a day of values, oldest first.
func fixtureValues(t *testing.T) []string {
	t.Helper()
	b, err := demo.JSON(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		PodMetrics []struct {
			PodID, Type string
			Labels      map[string]string
			Samples     [][2]string
		}
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	for _, m := range f.PodMetrics {
		if m.PodID == samplesPod && m.Type == "GPU_UTILIZATION_PER_GPU" && m.Labels["gpu"] == "0" {
			var vs []string
			for _, s := range m.Samples {
				vs = append(vs, s[1])
			}
			return vs
		}
	}
	t.Fatal("no GPU 0 utilization series in the demo")
	return nil
}

// storedGPU0 answers every stored sample of the series in [start, end] as
// instant → value.
func storedGPU0(t *testing.T, env *servertest.Env, start, end time.Time) map[string]string {
	t.Helper()
	code, body := env.Do(http.MethodGet, servertest.MetricsPath(samplesWorkload, samplesPod,
		"metricType", "GPU_UTILIZATION_PER_GPU", "start", start.Format(time.RFC3339), "end", end.Format(time.RFC3339),
		"numberOfSamples", "0"), "acme-operator", nil, nil)
	if code != http.StatusOK {
		t.Fatalf("metrics: %d %s", code, body)
	}
	var got struct {
		Measurements []struct {
			Labels map[string]string
			Values []struct{ Value, Timestamp string }
		}
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, m := range got.Measurements {
		if m.Labels["gpu"] == "0" {
			for _, v := range m.Values {
				ts, err := time.Parse(time.RFC3339, v.Timestamp)
				if err != nil {
					t.Fatal(err)
				}
				out[ts.UTC().Format(time.RFC3339)] = v.Value
			}
		}
	}
	return out
}

// A demo loaded three days ago has nothing in the last hour; the sample
// pusher back-fills it with the demo's daily cycle, value for value.
func TestDemoSamplesBackFill(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	b, err := demo.JSON(now.Add(-72 * time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	values := fixtureValues(t)
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, string(b))
		if got := storedGPU0(t, env, now.Add(-time.Hour), now); len(got) != 0 {
			t.Fatalf("the last hour of a demo loaded 3 days ago already has %d samples", len(got))
		}
		if err := agents.Fill(context.Background(), http.DefaultClient, env.Srv.URL, now.Add(-24*time.Hour), now); err != nil {
			t.Fatal(err)
		}
		got := storedGPU0(t, env, now.Add(-time.Hour).Add(time.Second), now)
		want := map[string]string{}
		for ts := now.Truncate(agents.Step); ts.After(now.Add(-time.Hour)); ts = ts.Add(-agents.Step) {
			want[ts.Format(time.RFC3339)] = values[agents.ValueAt(ts, len(values))]
		}
		if len(got) != 12 || len(want) != 12 {
			t.Fatalf("last hour: %d samples stored, %d expected, want 12: %v", len(got), len(want), got)
		}
		for ts, v := range want {
			if !sameNumber(got[ts], v) {
				t.Errorf("%s: %q, want %q", ts, got[ts], v)
			}
		}
		// Filling again writes the same values (samples are upserts).
		if err := agents.Fill(context.Background(), http.DefaultClient, env.Srv.URL, now.Add(-2*time.Hour), now); err != nil {
			t.Fatal(err)
		}
		if again := storedGPU0(t, env, now.Add(-time.Hour).Add(time.Second), now); len(again) != 12 {
			t.Errorf("after a second fill: %d samples", len(again))
		}
	})
}

// The pusher keeps extending the series as time passes.
func TestDemoSamplesKeepComing(t *testing.T) {
	start := time.Now().UTC().Truncate(agents.Step)
	var clock atomic.Int64
	clock.Store(start.UnixNano())
	st := storetest.Open(t, store.SQLite)
	// The demo was loaded an hour before the clock's start; the pusher's
	// first fill reaches start, then the clock jumps two hours.
	b, err := demo.JSON(start.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	env := servertest.New(t, st, string(b))
	ctx, cancel := context.WithCancel(context.Background())
	wait := agents.PushSamples(ctx, env.Srv.URL, agents.SampleOptions{
		Window: 10 * time.Minute, Interval: 10 * time.Millisecond,
		Now: func() time.Time { return time.Unix(0, clock.Load()).UTC() },
	})
	defer func() { cancel(); wait() }()
	waitSample := func(at time.Time) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for len(storedGPU0(t, env, at.Add(-time.Minute), at)) != 1 {
			if time.Now().After(deadline) {
				t.Fatalf("no sample at %s", at)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitSample(start)
	later := start.Add(2 * time.Hour)
	clock.Store(later.UnixNano())
	waitSample(later)
	// Everything between was filled too.
	if got := storedGPU0(t, env, start.Add(time.Second), later); len(got) != 24 {
		t.Errorf("%d samples over the two hours, want 24", len(got))
	}
}

// sameNumber compares decimals as numbers: the API answers "86" for a
// sample pushed as "86.0".
func sameNumber(a, b string) bool {
	x, errA := strconv.ParseFloat(a, 64)
	y, errB := strconv.ParseFloat(b, 64)
	return errA == nil && errB == nil && x == y
}
