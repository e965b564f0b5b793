package promsource_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/services"
	"gpugraph/internal/services/promsource"
	"gpugraph/internal/services/promsource/promtest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// TestPrometheusEndToEnd: the agent binary on the simulated DGX H100
// serves DCGM exporter's series (--metrics-addr), a real Prometheus
// scrapes it every second, and gpugraph with the Prometheus source
// answers podMetrics for a pod on that node. The agent's workloads
// assignments have not landed yet, so its series carry no pod label; the
// test maps the pod to its node's series with a --metrics-mapping
// override (selector Hostname="{{.Node}}"), which is also how an
// operator reads node-level exporters.
func TestPrometheusEndToEnd(t *testing.T) {
	t.Parallel() // the slowest of the package: they overlap each other (own servers, stores and ports)
	if testing.Short() {
		t.Skip("builds and runs the agent binary and Prometheus")
	}
	if err := promtest.Available(); err != nil && os.Getenv(promtest.RequireEnv) != "1" {
		t.Skipf("SKIPPED WITHOUT A REAL PROMETHEUS: %v", err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "agent")
	if out, err := exec.Command("go", "build", "-o", bin, "gpugraph/cmd/agent").CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/agent: %v\n%s", err, out)
	}
	// The agent's reports go to a server that is busy: they are not what
	// this test is about, and the agent retries them.
	busy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer busy.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	agent := exec.Command(bin, "--server", busy.URL, "--node-name", "gpu-node-2", "--mock", "dgxh100", "--metrics-addr", addr)
	agent.Env = append(os.Environ(), "GPUGRAPH_TOKEN=acme-agent")
	var agentLog strings.Builder
	agent.Stdout, agent.Stderr = &agentLog, &agentLog
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = agent.Process.Kill(); _ = agent.Wait() })

	// The exposition itself, in DCGM exporter's names and labels.
	var expo string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get("http://" + addr + "/metrics"); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			expo = string(b)
			break
		}
	}
	if !strings.Contains(expo, `DCGM_FI_DEV_GPU_UTIL{Hostname="gpu-node-2",UUID="GPU-`) || !strings.Contains(expo, `DCGM_FI_DEV_FB_USED{`) ||
		!strings.Contains(expo, `device="nvidia7",gpu="7",modelName="NVIDIA H100`) {
		t.Fatalf("exposition:\n%s\nagent log:\n%s", expo, agentLog.String())
	}

	prom := promtest.Start(t, promtest.Options{Targets: []string{addr}, ScrapeInterval: time.Second})
	mapping := filepath.Join(dir, "mapping.json")
	if err := os.WriteFile(mapping, []byte(`{"selector": "Hostname=\"{{.Node}}\""}`), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := promsource.LoadMapping(mapping)
	if err != nil {
		t.Fatal(err)
	}
	src, err := promsource.New(promsource.Config{BaseURL: prom.URL, Mapping: m})
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now().Add(-time.Second)
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.NewWithOptions(t, st, servertest.Base, servertest.Options{Services: services.Config{Metrics: src}}, servertest.Config{})
		q := `query($s: Time!, $e: Time!) { podMetrics(workloadId: "` + servertest.TrainWorkload + `", podId: "` + servertest.TrainPod1 + `",
			metricTypes: [GPU_UTILIZATION_PER_GPU, GPU_MEMORY_USAGE_BYTES], start: $s, end: $e, numberOfSamples: 5) {
			measurements { type labels values { value timestamp } } } }`
		var got struct {
			PodMetrics struct {
				Measurements []struct {
					Type   string
					Labels map[string]string
					Values []struct{ Value, Timestamp string }
				}
			}
		}
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(500 * time.Millisecond) {
			r := env.GraphQL("acme-workloads", q, map[string]any{"s": ts(began), "e": ts(time.Now())})
			env.Decode(r, &got)
			per := 0
			for _, ms := range got.PodMetrics.Measurements {
				if ms.Type == "GPU_UTILIZATION_PER_GPU" && len(ms.Values) > 0 {
					per++
				}
			}
			if per == 8 && len(got.PodMetrics.Measurements) == 9 && len(got.PodMetrics.Measurements[8].Values) > 0 {
				break
			}
			if time.Now().After(deadline) {
				b, _ := json.Marshal(got)
				t.Fatalf("podMetrics never showed the 8 GPUs of gpu-node-2: %s", b)
			}
		}
		for i, ms := range got.PodMetrics.Measurements[:8] {
			if ms.Labels["gpu"] != fmt.Sprint(i) || len(ms.Labels) != 1 {
				t.Errorf("measurement %d labels %v", i, ms.Labels)
			}
		}
		if v := got.PodMetrics.Measurements[8].Values[0].Value; v == "" {
			t.Errorf("GPU_MEMORY_USAGE_BYTES %q: the mock's used framebuffer (idle: 0), summed and in bytes", v)
		}
		// REST answers the same field.
		status, body := env.Do(http.MethodGet, servertest.MetricsPath(servertest.TrainWorkload, servertest.TrainPod1, "metricType", "GPU_UTILIZATION_PER_GPU",
			"start", ts(began), "end", ts(time.Now()), "numberOfSamples", "5"), "acme-workloads", nil, nil)
		if status != http.StatusOK || !strings.Contains(string(body), `"labels":{"gpu":"7"}`) {
			t.Fatalf("REST %d %s", status, body)
		}
	})
}
