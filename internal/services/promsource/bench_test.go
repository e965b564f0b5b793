package promsource_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/services"
	"gpugraph/internal/services/promsource"
	"gpugraph/internal/services/promsource/promtest"
	"gpugraph/internal/store/storetest"
)

// BenchmarkPodMetricsRangeRead reads the same samples with the same query
// (every type the default mapping reads, both pods, 1,000 points over the
// twins' 20 minutes) through the built-in store and through a real
// Prometheus holding them (backfilled). It skips without Prometheus.
func BenchmarkPodMetricsRangeRead(b *testing.B) {
	w := newTwins()
	prom := promtest.Start(b, promtest.Options{OpenMetrics: w.openMetrics()})
	src, err := promsource.New(promsource.Config{BaseURL: prom.URL})
	if err != nil {
		b.Fatal(err)
	}
	st := storetest.Open(b, storetest.Engines()[0])
	local := servertest.New(b, st, servertest.Base)
	remote := servertest.NewWithOptions(b, st, "", servertest.Options{Services: services.Config{Metrics: src}}, servertest.Config{})
	body, _ := json.Marshal(map[string]any{"podMetrics": w.batch, "podHistograms": w.hist})
	if status, out := local.Do(http.MethodPost, servertest.SamplesPath, "acme-metrics", body, nil); status != http.StatusOK {
		b.Fatalf("ingest: %d %s", status, out)
	}
	var types []string
	m, _ := promsource.DefaultMapping()
	for k, e := range m.Types {
		if e.Query != "" && !strings.HasPrefix(k, "NIM_") {
			types = append(types, k)
		}
	}
	last := w.t0.Add(time.Duration(w.samples-1) * w.every)
	path := servertest.MetricsPath(servertest.TrainWorkload, servertest.TrainPod1, "metricType", strings.Join(types, ","), "start", ts(w.t0.Add(time.Second)), "end", ts(last), "numberOfSamples", "1000")
	for name, env := range map[string]*servertest.Env{"store": local, "prometheus": remote} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if status, out := env.Do(http.MethodGet, path, "acme-workloads", nil, nil); status != http.StatusOK {
					b.Fatalf("%d %s", status, out)
				}
			}
		})
	}
}
