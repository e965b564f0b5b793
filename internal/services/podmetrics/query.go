package podmetrics

import (
	"context"
	"fmt"
	"strings"
	"time"

	"gpugraph/internal/auth"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/lib/podfield"
	"gpugraph/internal/lib/timeseries"
	"gpugraph/internal/store"
	"gpugraph/models"
)

// DefaultNumberOfSamples is numberOfSamples when the caller leaves it out (Run:ai's default).
const DefaultNumberOfSamples = 20

// MaxRawPoints bounds what numberOfSamples=0 (every stored sample) may
// answer in one request, so one call cannot pull a pod's whole history.
const MaxRawPoints = 100_000

// MaxSeriesSteps bounds what a sampled request (numberOfSamples > 0) may
// read: the series its types read (a per-GPU type one per GPU, an
// aggregate computed from them as many) times its samples. A step costs
// about four stored samples read raw (an index probe against a row of a
// range scan: httpapi's BenchmarkPodMetricsPoints), so either bound is
// about the same work: on a loaded 2-core host about a second of CPU on
// SQLite, whose engine runs in the process. A Run:ai console's ask (a few
// types, tens of samples) is far below; 8 GPUs × 3 per-GPU types × 1,000
// samples is just under it.
const MaxSeriesSteps = 25_000

// Request asks for some metric types of one pod over a time range.
type Request struct {
	WorkloadID, PodID string
	// Types are pod metric type names (GPU_UTILIZATION, …); repeats are
	// answered once, in the order first asked.
	Types      []string
	Start, End time.Time
	// NumberOfSamples is how many evenly spaced steps to answer, or 0 for
	// every stored sample; nil means DefaultNumberOfSamples.
	NumberOfSamples *int
}

// Result is the answer. Values are already written for the wire
// (timeseries.FormatValue), as both faces send them as strings.
type Result struct {
	// Measurements holds the sampled types: one per stored label set that
	// has points, or one without labels or values when none has.
	Measurements []Measurement
	// Histograms holds the histogram and _PERCENTILES types; nil when none
	// was asked.
	Histograms []Histogram
	// Omitted lists asked types that cannot exist for this pod (the NIM
	// types of a pod that serves no NIM); the REST face answers 207.
	Omitted []string
}

// Measurement is one series of a sampled type.
type Measurement struct {
	Type   string
	Labels map[string]string // never nil; empty when the series has none
	Values []Value
}

// Value is one point of a measurement.
type Value struct {
	T     time.Time
	Value string
}

// Histogram is a histogram type (cumulative bucket counts by upper bound)
// or a _PERCENTILES type (p50, p90 and p99).
type Histogram struct {
	Type   string
	Values []HistogramValue
}

// HistogramValue is one point of a histogram.
type HistogramValue struct {
	T    time.Time
	Data map[string]string
}

// OmittedDetails says why types were left out of a partial answer (the
// REST face's 207 details).
func OmittedDetails(types []string) string {
	return fmt.Sprintf("left out %s: NIM metrics exist only for pods that serve NVIDIA NIM, and none is stored for this pod",
		strings.Join(types, ", "))
}

// Service is the pod metrics service for both faces: the store holds the
// pods and their tenancy, the source the samples.
type Service struct {
	store  *store.Store
	source Source
}

// New is the service reading pods from st and samples from src (st's own,
// StoreSource, when nil).
func New(st *store.Store, src Source) *Service {
	if src == nil {
		src = StoreSource{Store: st}
	}
	return &Service{store: st, source: src}
}

// MayRead is the permission a query needs: workloads.read, as the pods it
// reads of. Query checks it first; a face that reads parameters of its own
// before calling Query asks it first, so that a refusal answers before a
// bad parameter does.
func (s *Service) MayRead(c *auth.Caller) error { return c.Require(auth.WorkloadsRead) }

// Query answers a pod's metrics to a caller holding workloads.read.
// Parameters are checked before the pod is looked up, so a bad request
// answers 400 whatever the pod; another tenant's pod answers 404 exactly as
// a missing one. The samples come from the service's source; the pod and
// its tenancy are always the store's.
func (s *Service) Query(ctx context.Context, c *auth.Caller, req Request) (Result, error) {
	st, src := s.store, s.source
	if err := s.MayRead(c); err != nil {
		return Result{}, err
	}
	q, err := checkRequest(req)
	if err != nil {
		return Result{}, err
	}
	// UUIDs compare case-insensitively; they are stored in lower case.
	req.WorkloadID, req.PodID = podfield.CanonicalUUID(req.WorkloadID), podfield.CanonicalUUID(req.PodID)
	pod := Pod{ID: req.PodID}
	if _, local := src.(StoreSource); local {
		ok, err := st.TenantPodInWorkload(ctx, c.TenantID, req.WorkloadID, req.PodID)
		if err != nil {
			return Result{}, err
		}
		if !ok {
			return Result{}, notFound(req)
		}
	} else {
		// A remote source matches the pod by its name, project, cluster
		// and node, so the row is read whole.
		p, err := st.TenantPodRow(ctx, c.TenantID, req.WorkloadID, req.PodID)
		if err != nil {
			return Result{}, err
		}
		if p == nil {
			return Result{}, notFound(req)
		}
		pod = podOf(p)
	}
	return src.Read(ctx, pod, Range{Types: q.types, Start: q.start, End: q.end, N: q.n, Steps: q.steps})
}

func notFound(req Request) error {
	return apierr.NotFound(apierr.NotFoundCode, "pod %q of workload %q not found", req.PodID, req.WorkloadID)
}

func podOf(p *models.Pod) Pod {
	out := Pod{ID: p.ID, Name: p.Name, ClusterID: p.ClusterID}
	if p.NodeName != nil {
		out.NodeName = *p.NodeName
	}
	if p.ProjectName != nil {
		out.Project = *p.ProjectName
	}
	return out
}

// query is a checked request.
type query struct {
	types      []string // as asked, without repeats
	start, end time.Time
	n          int
	steps      []time.Time // nil when n == 0
}

func checkRequest(req Request) (query, error) {
	q := query{start: req.Start.UTC(), end: req.End.UTC(), n: DefaultNumberOfSamples}
	seen := map[string]bool{}
	for _, t := range req.Types {
		if !models.IsMetricType(t) {
			return q, apierr.BadRequest("metricType %q is not a pod metric type", t)
		}
		if !seen[t] {
			seen[t] = true
			q.types = append(q.types, t)
		}
	}
	if len(q.types) == 0 {
		return q, apierr.BadRequest("metricType is required: name at least one pod metric type")
	}
	if !q.end.After(q.start) {
		return q, apierr.BadRequest("end (%s) must be after start (%s)", models.FormatTime(q.end), models.FormatTime(q.start))
	}
	if req.NumberOfSamples != nil {
		q.n = *req.NumberOfSamples
	}
	if q.n < 0 || q.n > timeseries.MaxSamples {
		return q, apierr.BadRequest("numberOfSamples must be between 0 and %d, got %d", timeseries.MaxSamples, q.n)
	}
	q.steps = timeseries.Steps(q.start, q.end, q.n)
	return q, nil
}

// StepCost is what one series × step costs against MaxRawPoints' unit,
// one stored sample read raw; see MaxSeriesSteps.
const StepCost = MaxRawPoints / MaxSeriesSteps

// estimatedSeries is how many series a type reads when nothing is known
// of the pod: a per-GPU type (or an aggregate computed from one) one per
// GPU of a DGX node, any other one.
func estimatedSeries(metricType string) int {
	if _, agg := aggregates[metricType]; agg || strings.HasSuffix(metricType, "_PER_GPU") {
		return 8
	}
	return 1
}

// AssumedInterval is the stored samples' spacing an estimate assumes:
// every 10 s, a DCGM exporter's and the node agent's usual interval.
const AssumedInterval = 10 * time.Second

// EstimateCost is what a request may cost before anything is read, in
// stored samples read raw (MaxRawPoints' unit): at n steps, the types'
// estimated series × n × StepCost; every stored sample (n = 0), their
// series × the range at AssumedInterval, at most MaxRawPoints. The
// GraphQL face charges it to an operation's complexity, so twenty
// aliased podMetrics over long ranges are refused before any runs; the
// read itself holds the exact series to MaxSeriesSteps and MaxRawPoints.
// Types are counted once each; an unknown one counts as a per-GPU type.
func EstimateCost(types []string, n int, start, end time.Time) float64 {
	series := 0
	seen := map[string]bool{}
	for _, t := range types {
		if seen[t] {
			continue
		}
		seen[t] = true
		if models.IsMetricType(t) {
			series += estimatedSeries(t)
		} else {
			series += 8
		}
	}
	if n > 0 {
		return float64(series) * float64(n) * StepCost
	}
	per := float64(MaxRawPoints)
	if end.After(start) {
		per = min(per, float64(end.Sub(start)/AssumedInterval)+1)
	}
	return min(float64(series)*per, MaxRawPoints)
}
