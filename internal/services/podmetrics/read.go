package podmetrics

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/lib/timeseries"
	"gpugraph/internal/store"
	"gpugraph/models"
)

// reader answers one request; it reads each histogram series once even
// when both it and its _PERCENTILES are asked for.
type reader struct {
	store      *store.Store
	pod        string
	q          query
	rawLeft    int // points numberOfSamples=0 may still answer
	histograms map[string][]store.HistogramPoint
	labels     map[string][]string // each type's stored label sets, read once
}

func (m *reader) read(ctx context.Context) (Result, error) {
	out := Result{Measurements: []Measurement{}, Omitted: []string{}}
	servesNIM := true
	for _, t := range m.q.types {
		if models.IsNIM(t) {
			var err error
			if servesNIM, err = m.store.PodHasNIMData(ctx, m.pod); err != nil {
				return Result{}, err
			}
			break
		}
	}
	var asked []string
	for _, t := range m.q.types {
		if models.IsNIM(t) && !servesNIM {
			out.Omitted = append(out.Omitted, t)
			continue
		}
		asked = append(asked, t)
	}
	if err := m.bound(ctx, asked); err != nil {
		return Result{}, err
	}
	for _, t := range asked {
		if models.KindOf(t) == models.Gauge {
			ms, err := m.gauge(ctx, t)
			if err != nil {
				return Result{}, err
			}
			out.Measurements = append(out.Measurements, ms...)
			continue
		}
		h, err := m.histogram(ctx, t)
		if err != nil {
			return Result{}, err
		}
		out.Histograms = append(out.Histograms, h)
	}
	return out, nil
}

// aggregates are the per-pod types that, when not stored, are computed
// from their _PER_GPU series.
var aggregates = map[string]struct {
	perGPU string
	mode   timeseries.AggMode
}{
	"GPU_UTILIZATION":        {"GPU_UTILIZATION_PER_GPU", timeseries.Mean},
	"GPU_MEMORY_USAGE_BYTES": {"GPU_MEMORY_USAGE_BYTES_PER_GPU", timeseries.Sum},
	"NVLINK_BANDWIDTH_TOTAL": {"NVLINK_BANDWIDTH_TOTAL_PER_GPU", timeseries.Sum},
}

// labelsOf answers the label sets stored for one type of the pod (read
// once a request: bound reads them first).
func (m *reader) labelsOf(ctx context.Context, metricType string) ([]string, error) {
	if l, ok := m.labels[metricType]; ok {
		return l, nil
	}
	l, err := m.store.MetricLabels(ctx, m.pod, metricType)
	if err != nil {
		return nil, err
	}
	m.labels[metricType] = l
	return l, nil
}

// plan lists the series the types read: a sampled type's stored series
// (an aggregate that is not stored, its per-GPU ones), a histogram or
// _PERCENTILES type its histogram's one series, each once.
func (m *reader) plan(ctx context.Context, types []string) ([]store.Series, error) {
	var out []store.Series
	seen := map[store.Series]bool{}
	add := func(s store.Series) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, t := range types {
		if models.KindOf(t) != models.Gauge {
			add(store.Series{PodID: m.pod, Type: strings.TrimSuffix(t, "_PERCENTILES")})
			continue
		}
		read := t
		labels, err := m.labelsOf(ctx, t)
		if err != nil {
			return nil, err
		}
		if agg, ok := aggregates[t]; ok && len(labels) == 0 {
			read = agg.perGPU
			if labels, err = m.labelsOf(ctx, read); err != nil {
				return nil, err
			}
		}
		for _, l := range labels {
			add(store.Series{PodID: m.pod, Type: read, Labels: l})
		}
	}
	return out, nil
}

// bound refuses, before a sample is read, a request that would read more
// than one request may (docs/decisions/0011-limits.md): at steps, MaxSeriesSteps series
// × steps; every stored sample (numberOfSamples=0), MaxRawPoints samples,
// counted in the index without reading them. Only the series' label sets
// are read for it, a handful of index seeks.
func (m *reader) bound(ctx context.Context, types []string) error {
	series, err := m.plan(ctx, types)
	if err != nil {
		return err
	}
	if m.q.n > 0 {
		if len(series)*m.q.n > MaxSeriesSteps {
			return apierr.BadRequest("this request would read %d series at %d samples each, more than the %d series × samples one request may read: ask for fewer metric types or fewer samples",
				len(series), m.q.n, MaxSeriesSteps)
		}
		return nil
	}
	left := m.rawLeft
	for _, ser := range series {
		n, err := m.store.SamplesInWindow(ctx, ser, m.q.start, m.q.end, left+1)
		if err != nil {
			return err
		}
		if left -= n; left < 0 {
			return m.spend(m.rawLeft + 1) // the message of a request over MaxRawPoints
		}
	}
	return nil
}

// gauge answers one sampled type: a measurement per stored series that has
// points, or one empty measurement when none has.
func (m *reader) gauge(ctx context.Context, metricType string) ([]Measurement, error) {
	labels, err := m.labelsOf(ctx, metricType)
	if err != nil {
		return nil, err
	}
	if agg, ok := aggregates[metricType]; ok && len(labels) == 0 {
		return m.aggregate(ctx, metricType, agg.perGPU, agg.mode)
	}
	var out []Measurement
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
func (m *reader) aggregate(ctx context.Context, metricType, perGPU string, mode timeseries.AggMode) ([]Measurement, error) {
	labels, err := m.labelsOf(ctx, perGPU)
	if err != nil {
		return nil, err
	}
	series := make([][]timeseries.Point, 0, len(labels))
	for _, l := range labels {
		pts, err := m.points(ctx, store.Series{PodID: m.pod, Type: perGPU, Labels: l})
		if err != nil {
			return nil, err
		}
		series = append(series, pts)
	}
	return []Measurement{measurement(metricType, map[string]string{}, timeseries.Aggregate(series, mode))}, nil
}

// points reads one series: the steps, or every sample in range.
func (m *reader) points(ctx context.Context, ser store.Series) ([]timeseries.Point, error) {
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

func (m *reader) spend(n int) error {
	if n > m.rawLeft {
		return apierr.BadRequest("numberOfSamples=0 would answer more than %d samples: narrow start and end, or ask for 1 to %d samples",
			MaxRawPoints, timeseries.MaxSamples)
	}
	m.rawLeft -= n
	return nil
}

// histogram answers a histogram type (its cumulative buckets) or a
// _PERCENTILES type (p50, p90 and p99 of its histogram type's buckets).
func (m *reader) histogram(ctx context.Context, metricType string) (Histogram, error) {
	base := strings.TrimSuffix(metricType, "_PERCENTILES")
	pts, err := m.histogramPoints(ctx, base)
	if err != nil {
		return Histogram{}, err
	}
	out := Histogram{Type: metricType, Values: make([]HistogramValue, 0, len(pts))}
	for _, p := range pts {
		var buckets map[string]string
		if err := json.Unmarshal([]byte(p.Buckets), &buckets); err != nil {
			return Histogram{}, fmt.Errorf("pod %s %s at %s: stored buckets: %w", m.pod, base, p.T, err)
		}
		data := buckets
		if metricType != base {
			parsed, err := timeseries.ParseBuckets(buckets)
			if err != nil {
				return Histogram{}, fmt.Errorf("pod %s %s at %s: stored buckets: %w", m.pod, base, p.T, err)
			}
			p50, p90, p99 := timeseries.Percentiles(parsed)
			data = map[string]string{"p50": timeseries.FormatValue(p50), "p90": timeseries.FormatValue(p90), "p99": timeseries.FormatValue(p99)}
		}
		out.Values = append(out.Values, HistogramValue{T: p.T, Data: data})
	}
	return out, nil
}

func (m *reader) histogramPoints(ctx context.Context, histogramType string) ([]store.HistogramPoint, error) {
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

func measurement(metricType string, labels map[string]string, pts []timeseries.Point) Measurement {
	values := make([]Value, len(pts))
	for i, p := range pts {
		values[i] = Value{T: p.T, Value: timeseries.FormatValue(p.V)}
	}
	return Measurement{Type: metricType, Labels: labels, Values: values}
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
