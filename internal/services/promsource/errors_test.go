package promsource_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/services"
	"gpugraph/internal/services/promsource"
	"gpugraph/internal/services/promsource/promtest"
	"gpugraph/internal/store/storetest"
)

// TestPrometheusSourceErrors: a backend that is down, slow (past the
// timeout) or refusing the query's size, and ingestion with a remote
// source. The refusal is a real Prometheus started with a tiny
// --query.max-samples.
func TestPrometheusSourceErrors(t *testing.T) {
	w := newTwins()
	prom := promtest.Start(t, promtest.Options{OpenMetrics: w.openMetrics(), Args: []string{"--query.max-samples=50"}})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	defer slow.Close()
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()

	st := storetest.Open(t, storetest.Engines()[0])
	mk := func(base string) *servertest.Env {
		src, err := promsource.New(promsource.Config{BaseURL: base, Timeout: 300 * time.Millisecond, BasicUser: "ops", BasicPassword: "s3cret-pw"})
		if err != nil {
			t.Fatal(err)
		}
		return servertest.NewWithOptions(t, st, "", servertest.Options{Services: services.Config{Metrics: src}}, servertest.Config{})
	}
	// The fixture once; every env below shares the store.
	servertest.New(t, st, servertest.Base)
	path := servertest.MetricsPath(servertest.TrainWorkload, servertest.TrainPod1, "metricType", "GPU_UTILIZATION_PER_GPU", "start", ts(w.t0), "end", ts(w.t0.Add(15*time.Minute)),
		"numberOfSamples", "1000")
	q := `query($w: ID!, $p: ID!) { podMetrics(workloadId: $w, podId: $p, metricTypes: [GPU_UTILIZATION_PER_GPU], start: "` + ts(w.t0) +
		`", end: "` + ts(w.t0.Add(15*time.Minute)) + `", numberOfSamples: 1000) { measurements { type } } }`
	for _, tc := range []struct {
		name, base string
		status     int
		code, want string
	}{
		{"down", downURL, http.StatusServiceUnavailable, promsource.UnavailableCode, "could not be reached"},
		{"slow", slow.URL, http.StatusServiceUnavailable, promsource.UnavailableCode, "did not answer within 300ms"},
		{"refusing", prom.URL, http.StatusBadRequest, "BAD_REQUEST", "narrow start and end, or ask for fewer numberOfSamples"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := mk(strings.Replace(tc.base, "http://", "http://ops:s3cret-pw@", 1))
			resp := env.Request(http.MethodGet, path, "acme-workloads", nil, nil)
			b := readBody(t, resp)
			if resp.StatusCode != tc.status || !strings.Contains(b, tc.want) || strings.Contains(b, "s3cret") {
				t.Fatalf("REST: %d %s", resp.StatusCode, b)
			}
			if tc.status == http.StatusServiceUnavailable {
				if resp.Header.Get("Retry-After") == "" || !strings.Contains(b, "Prometheus at "+tc.base) {
					t.Fatalf("a 503 names the backend and carries Retry-After: %v %s", resp.Header, b)
				}
			}
			r := env.GraphQL("acme-workloads", q, map[string]any{"w": servertest.TrainWorkload, "p": servertest.TrainPod1})
			if r.Code() != tc.code || !strings.Contains(r.Errors[0].Message, tc.want) || strings.Contains(r.Errors[0].Message, "s3cret") {
				t.Fatalf("GraphQL: %+v", r.Errors)
			}
		})
	}
	t.Run("ingest", func(t *testing.T) {
		env := mk(prom.URL)
		status, b := env.Do(http.MethodPost, servertest.SamplesPath, "acme-metrics", []byte(`{"podMetrics": []}`), nil)
		if status != http.StatusConflict || !strings.Contains(string(b), "Prometheus at "+prom.URL) {
			t.Fatalf("%d %s", status, b)
		}
	})
}

func readBody(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
