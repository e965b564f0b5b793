package podmetrics

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gpugraph/internal/lib/bounds"
	"gpugraph/internal/lib/podfield"
	"gpugraph/internal/lib/timeseries"
	"gpugraph/models"
)

// MetricSeries is one series of samples of one pod as a data set file and
// an ingestion batch spell it: [timestamp, value] pairs.
type MetricSeries struct {
	PodID   string            `json:"podId"`
	Type    string            `json:"type"`
	Labels  map[string]string `json:"labels"`
	Samples [][2]string       `json:"samples"`
}

// HistogramSeries is one histogram series of one pod, spelt as
// MetricSeries is.
type HistogramSeries struct {
	PodID   string            `json:"podId"`
	Type    string            `json:"type"`
	Samples []HistogramSample `json:"samples"`
}

// HistogramSample is cumulative counts by upper bound at one instant.
type HistogramSample struct {
	Timestamp string            `json:"timestamp"`
	Buckets   map[string]string `json:"buckets"`
}

// EntryError refuses one entry of a batch, naming it and its sample, e.g.
// `podMetrics[2] (pod "p", type "GPU_UTILIZATION_PER_GPU").samples[5]`.
// The loader reports it as a refused fixture row, ingestion as a 400.
type EntryError struct {
	Entry string
	Msg   string
}

func (e *EntryError) Error() string { return e.Entry + ": " + e.Msg }

func refuse(entry, format string, args ...any) error {
	return &EntryError{Entry: entry, Msg: fmt.Sprintf(format, args...)}
}

// Samples is a checked batch of podMetrics and podHistograms entries, in
// the shape the tables take. Both the data set loader (package dataset)
// and ingestion (POST /api/v1/metrics/samples, Batch) check samples here
// and store them with the store's WriteSamples; each resolves the pods the
// batch names in its own way (the file or the database; the caller's tenant).
type Samples struct {
	Metrics    []models.MetricSample
	Histograms []models.HistogramSample
	// Pods lists every pod the batch names, in the order of the entries
	// that first name them, for the caller's message when one does not exist.
	Pods []PodRef
}

// PodRef is a pod a batch names and the first entry naming it.
type PodRef struct {
	ID, Row string
}

// CheckSamples checks entries in the data set file's shape. The first bad
// entry refuses them all with an *EntryError naming it, e.g.
// `podMetrics[2] (pod "p", type "GPU_UTILIZATION_PER_GPU").samples[5]`.
// Pod ids are written back in canonical form.
//
// Timestamps are kept to the millisecond, as Prometheus keeps them, so that
// both engines store the same instant; two samples of one series in the
// same millisecond are refused. Values must be finite numbers (SQLite
// cannot store NaN). A _PER_GPU series must carry a "gpu" label. Buckets
// are cumulative counts: numeric finite upper bounds plus "+Inf", no bound
// spelt twice, counts that never decrease as the bound grows.
func CheckSamples(metrics []MetricSeries, histograms []HistogramSeries) (*Samples, error) {
	c := NewSampleChecker()
	for i := range metrics {
		metrics[i].PodID = podfield.CanonicalUUID(metrics[i].PodID)
		if err := c.Metric(metrics[i]); err != nil {
			return nil, err
		}
	}
	for i := range histograms {
		histograms[i].PodID = podfield.CanonicalUUID(histograms[i].PodID)
		if err := c.Histogram(histograms[i]); err != nil {
			return nil, err
		}
	}
	return c.Samples(), nil
}

// SampleChecker is CheckSamples one entry at a time, for a batch read as
// a stream (POST /api/v1/metrics/samples): an entry is checked and turned
// into rows as it arrives, so its text need not be kept. Entries are
// numbered in the order given, podMetrics and podHistograms apart.
type SampleChecker struct {
	out Samples
	// rows names every entry checked, by kind and number, for the message
	// of a sample that repeats one of an earlier entry.
	rows  [2][]string
	named map[string]bool
	// series numbers each series (kind, pod, type, labels); seen holds
	// each (series, millisecond) checked and the sample that has it.
	series map[string]int32
	seen   map[sampleKey]sampleAt
}

const (
	metricKind = iota
	histogramKind
)

type sampleKey struct {
	series int32
	ms     int64
}

type sampleAt struct{ entry, sample int32 }

// NewSampleChecker starts a batch.
func NewSampleChecker() *SampleChecker {
	return &SampleChecker{named: map[string]bool{}, series: map[string]int32{}, seen: map[sampleKey]sampleAt{}}
}

// Samples answers the rows of every entry checked.
func (c *SampleChecker) Samples() *Samples { return &c.out }

// Len is how many samples the entries checked hold.
func (c *SampleChecker) Len() int { return len(c.out.Metrics) + len(c.out.Histograms) }

func (c *SampleChecker) name(pod, row string) {
	if !c.named[pod] {
		c.named[pod] = true
		c.out.Pods = append(c.out.Pods, PodRef{ID: pod, Row: row})
	}
}

// sample refuses a sample whose series and millisecond an earlier one has.
func (c *SampleChecker) sample(kind int, seriesKey string, ts time.Time, j int) error {
	id, ok := c.series[seriesKey]
	if !ok {
		id = int32(len(c.series))
		c.series[seriesKey] = id
	}
	entry := int32(len(c.rows[kind]) - 1)
	k := sampleKey{series: id, ms: ts.UnixMilli()}
	if other, dup := c.seen[k]; dup {
		return refuse(sampleRow(c.rows[kind][entry], j), "the same series and timestamp as %s", sampleRow(c.rows[kind][other.entry], int(other.sample)))
	}
	c.seen[k] = sampleAt{entry: entry, sample: int32(j)}
	return nil
}

// Metric checks the next podMetrics entry; its pod id must be canonical
// already (podfield.CanonicalUUID).
func (c *SampleChecker) Metric(s MetricSeries) error {
	row := fmt.Sprintf("podMetrics[%d] (pod %q, type %q)", len(c.rows[metricKind]), s.PodID, s.Type)
	c.rows[metricKind] = append(c.rows[metricKind], row)
	if err := checkPodID(row, s.PodID); err != nil {
		return err
	}
	if !models.IsMetricType(s.Type) || models.KindOf(s.Type) != models.Gauge {
		return refuse(row, "type %q is not a sampled pod metric type", s.Type)
	}
	if err := checkLabels(s.Type, s.Labels); err != nil {
		return refuse(row, "%v", err)
	}
	if len(s.Samples) == 0 {
		return refuse(row, "samples are missing")
	}
	c.name(s.PodID, row)
	labels := canonicalLabels(s.Labels)
	key := strings.Join([]string{"m", s.PodID, s.Type, labels}, "\x00")
	for j, pair := range s.Samples {
		ts, err := sampleTime(pair[0])
		if err != nil {
			return refuse(sampleRow(row, j), "%v", err)
		}
		v, err := parseValue(pair[1])
		if err != nil {
			return refuse(sampleRow(row, j), "%v", err)
		}
		if err := c.sample(metricKind, key, ts, j); err != nil {
			return err
		}
		c.out.Metrics = append(c.out.Metrics, models.MetricSample{PodID: s.PodID, Type: s.Type, Labels: labels, TS: ts, Value: v})
	}
	return nil
}

// Histogram checks the next podHistograms entry; its pod id must be
// canonical already.
func (c *SampleChecker) Histogram(h HistogramSeries) error {
	row := fmt.Sprintf("podHistograms[%d] (pod %q, type %q)", len(c.rows[histogramKind]), h.PodID, h.Type)
	c.rows[histogramKind] = append(c.rows[histogramKind], row)
	if err := checkPodID(row, h.PodID); err != nil {
		return err
	}
	if models.KindOf(h.Type) != models.Histogram {
		return refuse(row, "type %q is not a histogram type (NIM_TIME_TO_FIRST_TOKEN_SECONDS, NIM_E2E_REQUEST_LATENCY_SECONDS)", h.Type)
	}
	if len(h.Samples) == 0 {
		return refuse(row, "samples are missing")
	}
	c.name(h.PodID, row)
	key := strings.Join([]string{"h", h.PodID, h.Type}, "\x00")
	for j, s := range h.Samples {
		ts, err := sampleTime(s.Timestamp)
		if err != nil {
			return refuse(sampleRow(row, j), "%v", err)
		}
		buckets, err := canonicalBuckets(s.Buckets)
		if err != nil {
			return refuse(sampleRow(row, j), "%v", err)
		}
		if err := c.sample(histogramKind, key, ts, j); err != nil {
			return err
		}
		c.out.Histograms = append(c.out.Histograms, models.HistogramSample{PodID: h.PodID, Type: h.Type, TS: ts, Buckets: buckets})
	}
	return nil
}

// checkPodID refuses an entry's missing or malformed pod id.
func checkPodID(row, id string) error {
	if id == "" {
		return refuse(row, "podId is missing")
	}
	if err := bounds.Text("podId", id, bounds.MaxID); err != nil {
		return refuse(row, "%v", err)
	}
	return nil
}

func sampleRow(entry string, j int) string { return fmt.Sprintf("%s.samples[%d]", entry, j) }

func sampleTime(s string) (time.Time, error) {
	ts, err := models.ParseTime(s)
	if err != nil {
		return time.Time{}, fmt.Errorf("timestamp: %v", err)
	}
	return ts.Truncate(time.Millisecond), nil
}

// labelName is Prometheus's label name syntax.
var labelName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

func checkLabels(metricType string, labels map[string]string) error {
	if len(labels) > bounds.MaxLabels {
		return fmt.Errorf("%d labels, more than %d", len(labels), bounds.MaxLabels)
	}
	for k, v := range labels {
		if len(k) > bounds.MaxLabelName {
			return fmt.Errorf("label name %.32q… is longer than %d bytes", k, bounds.MaxLabelName)
		}
		if err := bounds.Text(fmt.Sprintf("label %q", k), v, bounds.MaxLabelValue); err != nil {
			return err
		}
		if !labelName.MatchString(k) {
			return fmt.Errorf("label name %q is not a Prometheus label name", k)
		}
		if v == "" {
			return fmt.Errorf("label %q has an empty value", k)
		}
	}
	if strings.HasSuffix(metricType, "_PER_GPU") && labels["gpu"] == "" {
		return fmt.Errorf(`a _PER_GPU series needs a "gpu" label (e.g. {"gpu": "0"})`)
	}
	return nil
}

// canonicalLabels writes a label set as JSON with sorted keys ("{}" when empty).
func canonicalLabels(l map[string]string) string {
	if len(l) == 0 {
		return "{}"
	}
	b, _ := json.Marshal(l) // encoding/json sorts map keys
	return string(b)
}

// decimalNumber is the only number syntax samples take: no underscores,
// no hexadecimal, no "Inf"/"NaN" spellings (strconv.ParseFloat takes them all).
var decimalNumber = regexp.MustCompile(`^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// nonZeroDigit finds a mantissa that is not zero, to tell an underflow to 0 from 0.
var nonZeroDigit = regexp.MustCompile(`^[+-]?[0.]*[1-9]`)

// parseStrictFloat parses a decimal number that a float64 holds without
// overflow or underflow to zero.
func parseStrictFloat(s string) (float64, bool) {
	if len(s) > 64 || !decimalNumber.MatchString(s) {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || (v == 0 && nonZeroDigit.MatchString(s)) {
		return 0, false
	}
	return v, true
}

func parseValue(s string) (float64, error) {
	t := strings.TrimSpace(s)
	v, ok := parseStrictFloat(t)
	if !ok {
		if f, err := strconv.ParseFloat(t, 64); err == nil && (math.IsNaN(f) || math.IsInf(f, 0)) {
			return 0, fmt.Errorf("value %q is not a finite number", s)
		}
		if decimalNumber.MatchString(t) {
			return 0, fmt.Errorf("value %q is out of a float64's range (overflow or underflow)", s)
		}
		return 0, fmt.Errorf("value %q is not a number", s)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("value %q is not a finite number", s)
	}
	return v, nil
}

// canonicalBuckets checks a histogram's cumulative buckets and writes them
// as JSON, keeping the bounds as they were spelt ("1.0" stays "1.0").
func canonicalBuckets(b map[string]string) (string, error) {
	if len(b) == 0 {
		return "", fmt.Errorf("buckets are missing")
	}
	if _, ok := b["+Inf"]; !ok {
		return "", fmt.Errorf(`buckets lack the "+Inf" bucket`)
	}
	for bound := range b {
		if bound == "+Inf" {
			continue
		}
		f, ok := parseStrictFloat(bound)
		if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
			return "", fmt.Errorf(`bucket bound %q is not a finite number (the top bucket is spelt "+Inf")`, bound)
		}
	}
	buckets, err := timeseries.ParseBuckets(b)
	if err != nil {
		return "", err
	}
	for i := 1; i < len(buckets); i++ {
		prev, cur := buckets[i-1], buckets[i]
		if cur.UpperBound == prev.UpperBound {
			return "", fmt.Errorf("bucket bound %s is given twice", timeseries.FormatValue(cur.UpperBound))
		}
		if cur.Count < prev.Count {
			return "", fmt.Errorf("bucket %s counts %s, fewer than bucket %s below it (%s): counts are cumulative",
				timeseries.FormatValue(cur.UpperBound), timeseries.FormatValue(cur.Count),
				timeseries.FormatValue(prev.UpperBound), timeseries.FormatValue(prev.Count))
		}
	}
	out, _ := json.Marshal(b)
	return string(out), nil
}
