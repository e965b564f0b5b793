package rest

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"gpugraph/internal/auth"
	"gpugraph/internal/httpapi/route"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/lib/bounds"
	"gpugraph/internal/lib/ratelimit"
	"gpugraph/internal/lib/timeseries"
	"gpugraph/internal/services/podmetrics"
	"gpugraph/models"
)

func (api *API) metricsRoutes() []endpoint {
	metrics := api.Services.Metrics
	return []endpoint{
		{"GET /api/v1/workloads/{workloadId}/pods/{podId}/metrics", runai(metrics.MayRead, api.podMetrics)},
		{"POST /api/v1/metrics/samples", Costs(route.Policy{MaxBody: MaxSamplesBody, Rate: ratelimit.Ingest}, runai(metrics.MayWrite, api.ingestSamples))},
	}
}

// podMetrics answers Run:ai's pod metrics: 200, or 207 when some asked
// types cannot exist for the pod, as MetricsCompositeResponse JSON (plus
// omittedTypes and details on a 207) or, for Accept: text/csv, as CSV.
func (api *API) podMetrics(w http.ResponseWriter, r *http.Request) error {
	p, err := parseMetricsParams(r.URL.Query())
	if err != nil {
		return err
	}
	res, err := api.Services.Metrics.Query(r.Context(), auth.FromContext(r.Context()), podmetrics.Request{
		WorkloadID: r.PathValue("workloadId"), PodID: r.PathValue("podId"),
		Types: p.types, Start: p.start, End: p.end, NumberOfSamples: &p.numberOfSamples})
	if err != nil {
		return err
	}
	status := http.StatusOK
	if len(res.Omitted) > 0 {
		status = http.StatusMultiStatus
	}
	if prefersCSV(r.Header.Get("Accept")) {
		writeMetricsCSV(w, status, res)
		return nil
	}
	writeJSON(w, status, metricsJSON(res))
	return nil
}

type metricsParams struct {
	types           []string
	start, end      time.Time
	numberOfSamples int
}

// parseMetricsParams reads the query; range checks are podmetrics', so
// that both faces answer them alike.
func parseMetricsParams(q url.Values) (metricsParams, error) {
	p := metricsParams{numberOfSamples: podmetrics.DefaultNumberOfSamples}
	// metricType repeats (metricType=A&metricType=B) or is comma-joined
	// (metricType=A,B: the OpenAPI's explode: false), or both.
	for _, v := range q["metricType"] {
		for _, t := range strings.Split(v, ",") {
			t = strings.TrimSpace(t)
			if t == "" {
				continue
			}
			if !models.IsMetricType(t) {
				return p, apierr.BadRequest("metricType %q is not a pod metric type", t)
			}
			p.types = append(p.types, t)
		}
	}
	if len(p.types) == 0 {
		return p, apierr.BadRequest("metricType is required: name at least one pod metric type")
	}
	var err error
	if p.start, err = requiredTime(q, "start"); err != nil {
		return p, err
	}
	if p.end, err = requiredTime(q, "end"); err != nil {
		return p, err
	}
	if s := q.Get("numberOfSamples"); s != "" {
		n, ok := bounds.ParseInt(s)
		if !ok || n != int64(int(n)) {
			return p, apierr.BadRequest("numberOfSamples must be an integer between 0 and %d, got %q", timeseries.MaxSamples, s)
		}
		p.numberOfSamples = int(n)
	}
	return p, nil
}

// requiredTime reads start or end: an ISO 8601 date-time, one without a
// zone read as UTC (what runapy sends for a naive Python datetime).
func requiredTime(q url.Values, name string) (time.Time, error) {
	s := q.Get(name)
	if s == "" {
		return time.Time{}, apierr.BadRequest("%s is required (ISO 8601, e.g. 2023-06-06T12:09:18.211Z)", name)
	}
	t, err := models.ParseTimeDefaultUTC(s)
	if err != nil {
		e, _ := apierr.As(err)
		return time.Time{}, apierr.BadRequest("%s: %s", name, e.Message)
	}
	return t, nil
}

// The REST shape of MetricsCompositeResponse. Times are written by
// models.FormatTime, the one instant format of the API (RFC 3339 UTC with
// milliseconds, 2023-06-06T12:09:18.210Z; GraphQL writes the same); maps keep their keys in models.StringMapKeys order,
// so buckets read by upper bound with "+Inf" last.
type metricsBody struct {
	Measurements []measurementBody `json:"measurements"`
	Histogram    []histogramBody   `json:"histogram,omitempty"`
	// On a 207: the types left out, and why.
	OmittedTypes []string `json:"omittedTypes,omitempty"`
	Details      string   `json:"details,omitempty"`
}

type measurementBody struct {
	Type   string          `json:"type"`
	Labels json.RawMessage `json:"labels"`
	Values []valueBody     `json:"values"`
}

type valueBody struct {
	Value     string `json:"value"`
	Timestamp string `json:"timestamp"`
}

type histogramBody struct {
	Type   string               `json:"type"`
	Values []histogramValueBody `json:"values"`
}

type histogramValueBody struct {
	Timestamp string          `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
}

func metricsJSON(res podmetrics.Result) metricsBody {
	body := metricsBody{Measurements: make([]measurementBody, len(res.Measurements))}
	for i, m := range res.Measurements {
		values := make([]valueBody, len(m.Values))
		for j, v := range m.Values {
			values[j] = valueBody{Value: v.Value, Timestamp: models.FormatTime(v.T)}
		}
		body.Measurements[i] = measurementBody{Type: m.Type, Labels: labelsJSON(m.Labels), Values: values}
	}
	for _, h := range res.Histograms {
		values := make([]histogramValueBody, len(h.Values))
		for j, v := range h.Values {
			values[j] = histogramValueBody{Timestamp: models.FormatTime(v.T), Data: models.StringMapJSON(v.Data)}
		}
		body.Histogram = append(body.Histogram, histogramBody{Type: h.Type, Values: values})
	}
	if len(res.Omitted) > 0 {
		body.OmittedTypes = res.Omitted
		body.Details = podmetrics.OmittedDetails(res.Omitted)
	}
	return body
}

// labelsJSON writes a label set, {} when there is none.
func labelsJSON(l map[string]string) json.RawMessage {
	if l == nil {
		l = map[string]string{}
	}
	return models.StringMapJSON(l)
}

// quantileLabels name the percentiles in CSV as Prometheus names quantiles.
var quantileLabels = map[string]string{"p50": "0.5", "p90": "0.9", "p99": "0.99"}

// writeMetricsCSV writes one row per value: type,labels,timestamp,value.
// labels is the label set as JSON ({"gpu":"0"}; {} for none), quoted by
// the CSV rules. A histogram writes one row per bucket with the bound as
// label le, as Prometheus's _bucket series do; a _PERCENTILES type one row
// per percentile with label quantile (0.5, 0.9, 0.99). On a 207 the types
// left out are named in the X-Omitted-Metric-Types header.
func writeMetricsCSV(w http.ResponseWriter, status int, res podmetrics.Result) {
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	if len(res.Omitted) > 0 {
		w.Header().Set("X-Omitted-Metric-Types", strings.Join(res.Omitted, ","))
	}
	w.WriteHeader(status)
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"type", "labels", "timestamp", "value"})
	for _, m := range res.Measurements {
		labels := string(labelsJSON(m.Labels))
		for _, v := range m.Values {
			_ = cw.Write([]string{m.Type, labels, models.FormatTime(v.T), v.Value})
		}
	}
	for _, h := range res.Histograms {
		for _, v := range h.Values {
			ts := models.FormatTime(v.T)
			for _, k := range models.StringMapKeys(v.Data) {
				label := map[string]string{"le": k}
				if q, ok := quantileLabels[k]; ok {
					label = map[string]string{"quantile": q}
				}
				_ = cw.Write([]string{h.Type, string(models.StringMapJSON(label)), ts, v.Data[k]})
			}
		}
	}
	cw.Flush()
}

// prefersCSV reports whether an Accept header ranks text/csv above JSON;
// on a tie the type listed first wins, and JSON is the default.
func prefersCSV(accept string) bool { return prefersOverJSON(accept, "text/csv") }

// prefersOverJSON reports whether an Accept header ranks the text type
// mediaType (or text/*) above JSON; on a tie the type listed first wins,
// and JSON is the default.
func prefersOverJSON(accept, mediaType string) bool {
	best := func(types ...string) (q float64, at int) {
		q, at = -1, -1
		for i, part := range strings.Split(accept, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			pq := 1.0
			if s, ok := params["q"]; ok {
				if pq, err = strconv.ParseFloat(s, 64); err != nil {
					continue
				}
			}
			for _, t := range types {
				if mt == t && pq > q {
					q, at = pq, i
				}
			}
		}
		return q, at
	}
	textQ, textAt := best(mediaType, "text/*")
	jsonQ, jsonAt := best("application/json", "application/*", "*/*")
	if textQ <= 0 {
		return false
	}
	return textQ > jsonQ || (textQ == jsonQ && textAt < jsonAt)
}

// MaxSamplesBody bounds an ingestion body: podmetrics.MaxBatchSamples
// samples are 400 KB as [timestamp, value] pairs, and about 5 MB as NIM
// histograms of 30 buckets each; 8 MiB leaves room for labels and
// spacing. The body is read as a stream, entry by entry, so this bounds
// the read (and what one entry may hold), not what is kept.
const MaxSamplesBody = 8 << 20

// ingestSamples stores a batch of samples (permission metrics.write). The
// caller and the metrics source are checked before the body is read.
func (api *API) ingestSamples(w http.ResponseWriter, r *http.Request) error {
	c := auth.FromContext(r.Context())
	if err := api.Services.Metrics.MayIngest(c); err != nil {
		return err
	}
	batch, err := decodeSampleBatch(http.MaxBytesReader(w, r.Body, MaxSamplesBody))
	if err != nil {
		return err
	}
	n, err := api.Services.Metrics.Ingest(r.Context(), c, batch)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ingestedBody{Samples: n.Samples, HistogramSamples: n.HistogramSamples})
	return nil
}

// ingestedBody counts what a batch stored.
type ingestedBody struct {
	Samples          int `json:"samples"`
	HistogramSamples int `json:"histogramSamples"`
}

// batchShape names what the body must be, for the messages of one that
// is not.
const batchShape = `a batch of samples ({"podMetrics": [...], "podHistograms": [...]})`

// decodeSampleBatch reads {"podMetrics": [...], "podHistograms": [...]}
// as a stream: each entry is decoded, checked and turned into rows
// (podmetrics.Batch) before the next is read, so neither the body nor a
// tree of it is held, and a malformed entry is named. As every REST body
// (bounds.DecodeJSON), it refuses a name given twice in one object, data
// after the batch, and members the batch and its entries do not have.
func decodeSampleBatch(body io.Reader) (*podmetrics.Batch, error) {
	b := podmetrics.NewBatch()
	dec := bounds.NewJSONDecoder(body)
	bad := func(err error) error {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return apierr.New(http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE",
				"the body is larger than %d bytes: send the samples in smaller batches", tooBig.Limit)
		}
		if e, ok := apierr.As(err); ok {
			return e
		}
		return bounds.JSONError("the body", err)
	}
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		if err == nil {
			err = apierr.BadRequest("the body is not %s: it is a JSON %s", batchShape, tok.Kind())
		}
		return nil, bad(err)
	}
	for dec.PeekKind() == '"' {
		name, err := dec.ReadToken()
		if err != nil {
			return nil, bad(err)
		}
		var add func() error
		switch section := name.String(); section {
		case "podMetrics":
			add = func() error {
				var e podmetrics.MetricSeries
				if err := bounds.DecodeValue(dec, &e, bounds.KnownMembers); err != nil {
					return err // its place in the body names the entry: podMetrics[3].samples[2][1]
				}
				return b.AddMetric(e)
			}
		case "podHistograms":
			add = func() error {
				var e podmetrics.HistogramSeries
				if err := bounds.DecodeValue(dec, &e, bounds.KnownMembers); err != nil {
					return err
				}
				return b.AddHistogram(e)
			}
		default:
			return nil, apierr.BadRequest("the body is not %s: unknown field %q", batchShape, section)
		}
		if dec.PeekKind() == 'n' { // "podHistograms": null, as an empty list
			if _, err := dec.ReadToken(); err != nil {
				return nil, bad(err)
			}
			continue
		}
		if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '[' {
			if err == nil {
				err = apierr.BadRequest("%s must be an array of entries, not a JSON %s", name.String(), tok.Kind())
			}
			return nil, bad(err)
		}
		for dec.PeekKind() != ']' {
			if err := add(); err != nil {
				return nil, bad(err)
			}
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, bad(err)
		}
	}
	if _, err := dec.ReadToken(); err != nil { // the closing brace, or what stands in its place
		return nil, bad(err)
	}
	end := dec.InputOffset()
	if _, err := dec.ReadToken(); err != io.EOF {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, bad(err)
		}
		return nil, apierr.BadRequest("the body holds data after the batch, which ends at byte %d", end)
	}
	return b, nil
}
