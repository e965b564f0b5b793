package podmetrics

import (
	"context"
	"time"

	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/store"
)

// Source is where a pod's samples are read from: the built-in store (the
// default, StoreSource) or a server with Prometheus's HTTP API (package
// promsource). Query checks the caller, the parameters and the pod's
// tenancy before a source is asked, so a source only reads.
//
// A source answers the same Result for the same samples: one measurement
// per label set with points (one empty measurement when none has),
// histograms and percentiles in the asked order, and the NIM types it
// cannot serve for this pod in Omitted. Errors a caller should see are
// *apierr.Error (a backend that is down is a 503 naming it); anything
// else is internal.
type Source interface {
	Read(ctx context.Context, pod Pod, r Range) (Result, error)
	// Name names the source for people (“the built-in store”,
	// “Prometheus at http://prom:9090”), never with credentials.
	Name() string
	// Ingests reports whether POST /api/v1/metrics/samples writes to it.
	Ingests() bool
}

// Pod is the pod a source reads for: what the store knows about it, which
// a remote source turns into label matchers. It is not Run:ai's pod object
// (models.Pod, the one declaration of the pod, holds that) but the five
// labels a source matches on, taken from it, unknown ones empty: a source
// needs no more of the row, and none of its JSON.
type Pod struct {
	ID        string
	Name      string
	ClusterID string
	NodeName  string // empty when the pod was never scheduled
	Project   string // empty when unknown
}

// Range is a checked request: the types as asked without repeats, the
// instants, and the steps of the range query (nil for N == 0, every
// stored sample).
type Range struct {
	Types      []string
	Start, End time.Time
	N          int
	Steps      []time.Time
}

// StoreSource reads the samples stored in gpugraph's own database (the
// fixture file and POST /api/v1/metrics/samples write them).
type StoreSource struct{ Store *store.Store }

// Name implements Source.
func (StoreSource) Name() string { return "the built-in store" }

// Ingests implements Source: the store is what ingestion writes.
func (StoreSource) Ingests() bool { return true }

// Read implements Source.
func (s StoreSource) Read(ctx context.Context, pod Pod, r Range) (Result, error) {
	rd := &reader{store: s.Store, pod: pod.ID, q: query{types: r.Types, start: r.Start, end: r.End, n: r.N, steps: r.Steps},
		rawLeft: MaxRawPoints, histograms: map[string][]store.HistogramPoint{}, labels: map[string][]string{}}
	return rd.read(ctx)
}

// ExternalSourceCode answers ingestion when metrics are read elsewhere.
const ExternalSourceCode = "METRICS_SOURCE_EXTERNAL"

// refuseIngest is the 409 of POST /api/v1/metrics/samples when the
// server reads metrics from a source that ingestion does not write.
func refuseIngest(src Source) error {
	return apierr.Conflict(ExternalSourceCode,
		"this server reads pod metrics from %s (--metrics-source), not from its own store: samples pushed here would never be answered; let that backend scrape DCGM exporter, cAdvisor and NIM (or the node agent's --metrics-addr) instead",
		src.Name())
}
