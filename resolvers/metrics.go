package resolvers

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"gpugraph/apierr"
	"gpugraph/auth"
	"gpugraph/graph/model"
	"gpugraph/models"
	"gpugraph/promql"
	"gpugraph/store"
)

// DefaultNumberOfSamples is numberOfSamples when the caller leaves it out (Run:ai's default).
const DefaultNumberOfSamples = 20

// MaxRawPoints bounds what numberOfSamples=0 (every stored sample) may
// answer in one request, so one call cannot pull a pod's whole history.
const MaxRawPoints = 100_000

// PodMetrics answers SPEC §7 for both faces. Parameters are checked before
// the pod is looked up, so a bad request answers 400 whatever the pod.
func (r *queryResolver) PodMetrics(ctx context.Context, workloadID string, podID string, metricTypes []model.PodMetricType, start time.Time, end time.Time, numberOfSamples *int) (*model.PodMetrics, error) {
	c, err := auth.Require(ctx, auth.WorkloadsRead)
	if err != nil {
		return nil, err
	}
	q, err := newMetricsQuery(metricTypes, start, end, numberOfSamples)
	if err != nil {
		return nil, err
	}
	ok, err := r.Store.TenantPodInWorkload(ctx, c.TenantID, workloadID, podID)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apierr.NotFound(apierr.NotFoundCode, "pod %q of workload %q not found", podID, workloadID)
	}
	m := &metricsReader{store: r.Store, pod: podID, q: q, rawLeft: MaxRawPoints, histograms: map[string][]store.HistogramPoint{}}
	return m.read(ctx)
}

// OmittedDetails says why types were left out of a partial answer (the
// REST face's 207 details).
func OmittedDetails(types []model.PodMetricType) string {
	names := make([]string, len(types))
	for i, t := range types {
		names[i] = string(t)
	}
	return fmt.Sprintf("left out %s: NIM metrics exist only for pods that serve NVIDIA NIM, and none is stored for this pod",
		strings.Join(names, ", "))
}

// metricsQuery is a checked request.
type metricsQuery struct {
	types      []string // as asked, without repeats
	start, end time.Time
	n          int
	steps      []time.Time // nil when n == 0
}

func newMetricsQuery(types []model.PodMetricType, start, end time.Time, n *int) (metricsQuery, error) {
	q := metricsQuery{start: start.UTC(), end: end.UTC(), n: DefaultNumberOfSamples}
	seen := map[string]bool{}
	for _, t := range types {
		if !models.IsMetricType(string(t)) {
			return q, apierr.BadRequest("metricType %q is not a pod metric type", t)
		}
		if !seen[string(t)] {
			seen[string(t)] = true
			q.types = append(q.types, string(t))
		}
	}
	if len(q.types) == 0 {
		return q, apierr.BadRequest("metricType is required: name at least one pod metric type")
	}
	if !q.end.After(q.start) {
		return q, apierr.BadRequest("end (%s) must be after start (%s)", promql.FormatTime(q.end), promql.FormatTime(q.start))
	}
	if n != nil {
		q.n = *n
	}
	if q.n < 0 || q.n > promql.MaxSamples {
		return q, apierr.BadRequest("numberOfSamples must be between 0 and %d, got %d", promql.MaxSamples, q.n)
	}
	q.steps = promql.Steps(q.start, q.end, q.n)
	return q, nil
}

// metricsReader answers one request; it reads each histogram series once
// even when both it and its _PERCENTILES are asked for.
type metricsReader struct {
	store      *store.Store
	pod        string
	q          metricsQuery
	rawLeft    int // points numberOfSamples=0 may still answer
	histograms map[string][]store.HistogramPoint
}

func (m *metricsReader) read(ctx context.Context) (*model.PodMetrics, error) {
	out := &model.PodMetrics{Measurements: []*model.Measurement{}, OmittedTypes: []model.PodMetricType{}}
	servesNIM := true
	for _, t := range m.q.types {
		if models.IsNIM(t) {
			var err error
			if servesNIM, err = m.store.PodHasNIMData(ctx, m.pod); err != nil {
				return nil, err
			}
			break
		}
	}
	for _, t := range m.q.types {
		if models.IsNIM(t) && !servesNIM {
			out.OmittedTypes = append(out.OmittedTypes, model.PodMetricType(t))
			continue
		}
		if models.KindOf(t) == models.Gauge {
			ms, err := m.gauge(ctx, t)
			if err != nil {
				return nil, err
			}
			out.Measurements = append(out.Measurements, ms...)
			continue
		}
		h, err := m.histogram(ctx, t)
		if err != nil {
			return nil, err
		}
		out.Histogram = append(out.Histogram, h)
	}
	return out, nil
}

// aggregates are the per-pod types that, when not stored, are computed
// from their _PER_GPU series.
var aggregates = map[string]struct {
	perGPU string
	mode   promql.AggMode
}{
	"GPU_UTILIZATION":        {"GPU_UTILIZATION_PER_GPU", promql.Mean},
	"GPU_MEMORY_USAGE_BYTES": {"GPU_MEMORY_USAGE_BYTES_PER_GPU", promql.Sum},
	"NVLINK_BANDWIDTH_TOTAL": {"NVLINK_BANDWIDTH_TOTAL_PER_GPU", promql.Sum},
}

// gauge answers one sampled type: a measurement per stored series that has
// points, or one empty measurement when none has.
func (m *metricsReader) gauge(ctx context.Context, metricType string) ([]*model.Measurement, error) {
	labels, err := m.store.MetricLabels(ctx, m.pod, metricType)
	if err != nil {
		return nil, err
	}
	if agg, ok := aggregates[metricType]; ok && len(labels) == 0 {
		return m.aggregate(ctx, metricType, agg.perGPU, agg.mode)
	}
	var out []*model.Measurement
	for _, l := range sortLabels(labels) {
		pts, err := m.points(ctx, store.Series{PodID: m.pod, Type: metricType, Labels: l.raw})
		if err != nil {
			return nil, err
		}
		if len(pts) > 0 {
			out = append(out, measurement(metricType, l.labels, pts))
		}
	}
	if len(out) == 0 {
		out = append(out, measurement(metricType, map[string]string{}, nil))
	}
	return out, nil
}

// aggregate computes a per-pod type from its per-GPU series, at each step
// from the GPUs that have a value there.
func (m *metricsReader) aggregate(ctx context.Context, metricType, perGPU string, mode promql.AggMode) ([]*model.Measurement, error) {
	labels, err := m.store.MetricLabels(ctx, m.pod, perGPU)
	if err != nil {
		return nil, err
	}
	series := make([][]promql.Point, 0, len(labels))
	for _, l := range labels {
		pts, err := m.points(ctx, store.Series{PodID: m.pod, Type: perGPU, Labels: l})
		if err != nil {
			return nil, err
		}
		series = append(series, pts)
	}
	return []*model.Measurement{measurement(metricType, map[string]string{}, promql.Aggregate(series, mode))}, nil
}

// points reads one series: the steps, or every sample in range.
func (m *metricsReader) points(ctx context.Context, ser store.Series) ([]promql.Point, error) {
	if m.q.n > 0 {
		return m.store.MetricAtSteps(ctx, ser, m.q.steps)
	}
	rows, err := m.store.MetricRange(ctx, ser, m.q.start, m.q.end, m.rawLeft+1)
	if err != nil {
		return nil, err
	}
	if err := m.spend(len(rows)); err != nil {
		return nil, err
	}
	return rows, nil
}

func (m *metricsReader) spend(n int) error {
	if n > m.rawLeft {
		return apierr.BadRequest("numberOfSamples=0 would answer more than %d samples: narrow start and end, or ask for 1 to %d samples",
			MaxRawPoints, promql.MaxSamples)
	}
	m.rawLeft -= n
	return nil
}

// histogram answers a histogram type (its cumulative buckets) or a
// _PERCENTILES type (p50, p90 and p99 of its histogram type's buckets).
func (m *metricsReader) histogram(ctx context.Context, metricType string) (*model.HistogramSeries, error) {
	base := strings.TrimSuffix(metricType, "_PERCENTILES")
	pts, err := m.histogramPoints(ctx, base)
	if err != nil {
		return nil, err
	}
	out := &model.HistogramSeries{Type: metricType, Values: make([]*model.HistogramValue, 0, len(pts))}
	for _, p := range pts {
		var buckets map[string]string
		if err := json.Unmarshal([]byte(p.Buckets), &buckets); err != nil {
			return nil, fmt.Errorf("pod %s %s at %s: stored buckets: %w", m.pod, base, p.T, err)
		}
		data := buckets
		if metricType != base {
			parsed, err := promql.ParseBuckets(buckets)
			if err != nil {
				return nil, fmt.Errorf("pod %s %s at %s: stored buckets: %w", m.pod, base, p.T, err)
			}
			p50, p90, p99 := promql.Percentiles(parsed)
			data = map[string]string{"p50": promql.FormatValue(p50), "p90": promql.FormatValue(p90), "p99": promql.FormatValue(p99)}
		}
		out.Values = append(out.Values, &model.HistogramValue{Timestamp: p.T, Data: data})
	}
	return out, nil
}

func (m *metricsReader) histogramPoints(ctx context.Context, histogramType string) ([]store.HistogramPoint, error) {
	if pts, ok := m.histograms[histogramType]; ok {
		return pts, nil
	}
	ser := store.Series{PodID: m.pod, Type: histogramType}
	var pts []store.HistogramPoint
	var err error
	if m.q.n > 0 {
		pts, err = m.store.HistogramAtSteps(ctx, ser, m.q.steps)
	} else {
		pts, err = m.store.HistogramRange(ctx, ser, m.q.start, m.q.end, m.rawLeft+1)
		if err == nil {
			err = m.spend(len(pts))
		}
	}
	if err != nil {
		return nil, err
	}
	m.histograms[histogramType] = pts
	return pts, nil
}

func measurement(metricType string, labels map[string]string, pts []promql.Point) *model.Measurement {
	values := make([]*model.MetricValue, len(pts))
	for i, p := range pts {
		values[i] = &model.MetricValue{Value: promql.FormatValue(p.V), Timestamp: p.T}
	}
	return &model.Measurement{Type: metricType, Labels: labels, Values: values}
}

type labelSet struct {
	raw    string
	labels map[string]string
}

// sortLabels decodes stored label sets and orders them by GPU index
// (numerically, so "10" follows "9"), then by their JSON.
func sortLabels(raw []string) []labelSet {
	out := make([]labelSet, 0, len(raw))
	for _, r := range raw {
		l := map[string]string{}
		_ = json.Unmarshal([]byte(r), &l) // written by the store as canonical JSON
		out = append(out, labelSet{raw: r, labels: l})
	}
	gpu := func(l labelSet) int {
		if i, err := strconv.Atoi(l.labels["gpu"]); err == nil {
			return i
		}
		return -1
	}
	slices.SortStableFunc(out, func(a, b labelSet) int {
		return cmp.Or(cmp.Compare(gpu(a), gpu(b)), strings.Compare(a.raw, b.raw))
	})
	return out
}
