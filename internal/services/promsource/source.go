package promsource

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/lib/timeseries"
	"gpugraph/internal/services/podmetrics"
	"gpugraph/models"
)

// quantiles are the _PERCENTILES keys and the quantile each asks.
var quantiles = []struct{ key, q string }{{"p50", "0.5"}, {"p90", "0.9"}, {"p99", "0.99"}}

// Read implements podmetrics.Source: each asked type is one query_range
// (three for a _PERCENTILES type) at the store's steps, shaped as the
// store shapes its answer.
func (s *Source) Read(ctx context.Context, pod podmetrics.Pod, r podmetrics.Range) (podmetrics.Result, error) {
	if r.N == 0 {
		return podmetrics.Result{}, apierr.BadRequest(
			"numberOfSamples=0 (every stored sample) is answered only by the built-in store; this server reads metrics from %s: ask for 1 to %d samples",
			s.name, timeseries.MaxSamples)
	}
	p, err := s.params(pod)
	if err != nil {
		return podmetrics.Result{}, err
	}
	first, last := r.Steps[0], r.Steps[len(r.Steps)-1]
	step := time.Millisecond
	if len(r.Steps) > 1 {
		step = r.Steps[1].Sub(r.Steps[0])
	}
	rq := rangeQuery{start: first, end: last, step: step}

	out := podmetrics.Result{Measurements: []podmetrics.Measurement{}, Omitted: []string{}}
	servesNIM := true
	for _, t := range r.Types {
		if models.IsNIM(t) {
			if servesNIM, err = s.servesNIM(ctx, p, r); err != nil {
				return podmetrics.Result{}, err
			}
			break
		}
	}
	for _, t := range r.Types {
		if models.IsNIM(t) && !servesNIM {
			out.Omitted = append(out.Omitted, t)
			continue
		}
		e := s.mapping.Types[t]
		switch models.KindOf(t) {
		case models.Gauge:
			ms, err := s.gauge(ctx, t, e, p, rq)
			if err != nil {
				return podmetrics.Result{}, err
			}
			out.Measurements = append(out.Measurements, ms...)
		case models.Histogram:
			h, err := s.histogram(ctx, t, e, p, rq)
			if err != nil {
				return podmetrics.Result{}, err
			}
			out.Histograms = append(out.Histograms, h)
		default:
			h, err := s.percentiles(ctx, t, e, p, rq)
			if err != nil {
				return podmetrics.Result{}, err
			}
			out.Histograms = append(out.Histograms, h)
		}
	}
	return out, nil
}

// params derives the template parameters of a pod (see Mapping.Namespace
// for the namespace).
func (s *Source) params(pod podmetrics.Pod) (Params, error) {
	p := Params{Pod: escape(pod.Name), Project: escape(pod.Project), Cluster: escape(pod.ClusterID), Node: escape(pod.NodeName)}
	var err error
	if p.Namespace, err = render("namespace", s.mapping.Namespace, p); err != nil {
		return p, err
	}
	if p.Selector, err = render("selector", s.mapping.Selector, p); err != nil {
		return p, err
	}
	return p, nil
}

func (s *Source) servesNIM(ctx context.Context, p Params, r podmetrics.Range) (bool, error) {
	if s.mapping.NIMPresence == "" {
		return true, nil
	}
	window := r.End.Sub(r.Start) + timeseries.LookbackDelta
	p.Window = strconv.FormatInt(int64(window/time.Second)+1, 10) + "s"
	q, err := render("nimPresence", s.mapping.NIMPresence, p)
	if err != nil {
		return false, err
	}
	d, err := s.get(ctx, "/api/v1/query", url.Values{"query": {q}, "time": {formatTime(r.End)}})
	if err != nil {
		return false, err
	}
	var res []series
	if err := json.Unmarshal(d.Result, &res); err != nil || d.ResultType != "vector" {
		return false, fmt.Errorf("%s: nimPresence answered %s, not a vector", s.name, d.ResultType)
	}
	return len(res) > 0, nil
}

type rangeQuery struct {
	start, end time.Time
	step       time.Duration
}

// matrix runs one query_range.
func (s *Source) matrix(ctx context.Context, name, text string, p Params, rq rangeQuery) ([]series, error) {
	q, err := render(name, text, p)
	if err != nil {
		return nil, err
	}
	d, err := s.get(ctx, "/api/v1/query_range", url.Values{
		"query": {q},
		"start": {formatTime(rq.start)},
		"end":   {formatTime(rq.end)},
		// Prometheus reads a bare number as seconds through a float;
		// a duration in ms is exact.
		"step": {strconv.FormatInt(rq.step.Milliseconds(), 10) + "ms"},
	})
	if err != nil {
		return nil, err
	}
	var res []series
	if err := json.Unmarshal(d.Result, &res); err != nil || d.ResultType != "matrix" {
		return nil, fmt.Errorf("%s: query for %s answered %q, not a matrix (%v)", s.name, name, d.ResultType, err)
	}
	return res, nil
}

func (s *Source) gauge(ctx context.Context, t string, e Entry, p Params, rq rangeQuery) ([]podmetrics.Measurement, error) {
	empty := []podmetrics.Measurement{{Type: t, Labels: map[string]string{}, Values: []podmetrics.Value{}}}
	if e.Query == "" {
		return empty, nil
	}
	res, err := s.matrix(ctx, t, e.Query, p, rq)
	if err != nil {
		return nil, err
	}
	type one struct {
		labels map[string]string
		key    string
		values []podmetrics.Value
	}
	var all []one
	for _, ser := range res {
		l := map[string]string{}
		for _, k := range e.Labels {
			if v, ok := ser.Metric[k]; ok {
				l[k] = v
			}
		}
		vals, err := s.values(t, ser.Values)
		if err != nil {
			return nil, err
		}
		if len(vals) > 0 {
			all = append(all, one{labels: l, key: string(models.StringMapJSON(l)), values: vals})
		}
	}
	// The store's order: by GPU index numerically, then the labels' JSON.
	gpu := func(o one) int {
		if i, err := strconv.Atoi(o.labels["gpu"]); err == nil {
			return i
		}
		return -1
	}
	slices.SortStableFunc(all, func(a, b one) int { return cmp.Or(cmp.Compare(gpu(a), gpu(b)), strings.Compare(a.key, b.key)) })
	out := make([]podmetrics.Measurement, 0, len(all))
	for _, o := range all {
		out = append(out, podmetrics.Measurement{Type: t, Labels: o.labels, Values: o.values})
	}
	if len(out) == 0 {
		return empty, nil
	}
	return out, nil
}

func (s *Source) values(t string, raw [][2]json.RawMessage) ([]podmetrics.Value, error) {
	out := make([]podmetrics.Value, 0, len(raw))
	for _, pt := range raw {
		ts, err := parseTime(string(pt[0]))
		if err != nil {
			return nil, fmt.Errorf("%s: %s: timestamp %s: %w", s.name, t, pt[0], err)
		}
		// Values are strings ("85", "NaN", "+Inf"); ParseFloat reads all.
		var text string
		if err := json.Unmarshal(pt[1], &text); err != nil {
			return nil, fmt.Errorf("%s: %s: value %s: %w", s.name, t, pt[1], err)
		}
		v, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: value %q: %w", s.name, t, text, err)
		}
		out = append(out, podmetrics.Value{T: ts, Value: timeseries.FormatValue(v)})
	}
	return out, nil
}

// histogram answers cumulative bucket counts by upper bound at each step
// some bucket has a value.
func (s *Source) histogram(ctx context.Context, t string, e Entry, p Params, rq rangeQuery) (podmetrics.Histogram, error) {
	h := podmetrics.Histogram{Type: t, Values: []podmetrics.HistogramValue{}}
	if e.Query == "" {
		return h, nil
	}
	res, err := s.matrix(ctx, t, e.Query, p, rq)
	if err != nil {
		return h, err
	}
	at := map[int64]map[string]string{}
	for _, ser := range res {
		le, ok := ser.Metric["le"]
		if !ok {
			return h, fmt.Errorf("%s: the query for %s answered a series without le", s.name, t)
		}
		vals, err := s.values(t, ser.Values)
		if err != nil {
			return h, err
		}
		for _, v := range vals {
			k := v.T.UnixMilli()
			if at[k] == nil {
				at[k] = map[string]string{}
			}
			at[k][le] = v.Value
		}
	}
	h.Values = collect(at)
	return h, nil
}

// percentiles runs the type's query once per quantile.
func (s *Source) percentiles(ctx context.Context, t string, e Entry, p Params, rq rangeQuery) (podmetrics.Histogram, error) {
	h := podmetrics.Histogram{Type: t, Values: []podmetrics.HistogramValue{}}
	if e.Query == "" {
		return h, nil
	}
	at := map[int64]map[string]string{}
	for _, q := range quantiles {
		p.Quantile = q.q
		res, err := s.matrix(ctx, t, e.Query, p, rq)
		if err != nil {
			return h, err
		}
		for _, ser := range res {
			vals, err := s.values(t, ser.Values)
			if err != nil {
				return h, err
			}
			for _, v := range vals {
				k := v.T.UnixMilli()
				if at[k] == nil {
					at[k] = map[string]string{}
				}
				at[k][q.key] = v.Value
			}
		}
	}
	h.Values = collect(at)
	return h, nil
}

func collect(at map[int64]map[string]string) []podmetrics.HistogramValue {
	keys := make([]int64, 0, len(at))
	for k := range at {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]podmetrics.HistogramValue, 0, len(keys))
	for _, k := range keys {
		out = append(out, podmetrics.HistogramValue{T: time.UnixMilli(k).UTC(), Data: at[k]})
	}
	return out
}

// formatTime writes an instant as Prometheus reads it exactly: RFC 3339
// with milliseconds.
func formatTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }

// parseTime reads Prometheus's timestamp, seconds with up to three
// decimals, from its text so no float rounding moves it.
func parseTime(s string) (time.Time, error) {
	sec, frac, _ := strings.Cut(s, ".")
	secs, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil {
			return time.Time{}, err
		}
		return time.UnixMilli(int64(f*1000 + 0.5)).UTC(), nil
	}
	ms := int64(0)
	if frac != "" {
		frac = (frac + "000")[:3]
		if ms, err = strconv.ParseInt(frac, 10, 64); err != nil {
			return time.Time{}, err
		}
	}
	return time.UnixMilli(secs*1000 + ms).UTC(), nil
}
