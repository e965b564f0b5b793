package middleware

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metrics are the server's own request counts and latencies. Every label
// takes its value from a closed set, whatever a client sends, so no
// request can add a series: the route is the registered pattern (never the
// raw URL, so ids do not reach a label) or "unmatched", the method one of
// HTTP's nine or "other", the status one of those net/http names or
// "other". (An open label made /metrics 370 MB after 20,000 requests with
// invented methods.)
type Metrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

// NewMetrics registers the request metrics, and the Go runtime's and the
// process's, on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gpugraph_http_requests_total",
			Help: "HTTP requests by route, method and status code.",
		}, []string{"path", "method", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "gpugraph_http_request_duration_seconds",
			Help:    "HTTP request latency by route and method.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}, []string{"path", "method"}),
	}
	reg.MustRegister(m.requests, m.latency,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Instrument counts and times every request next serves.
func (m *Metrics) Instrument(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		path := r.Pattern
		if path == "" {
			path = "unmatched"
		}
		method := methodLabel(r.Method)
		m.requests.WithLabelValues(path, method, codeLabel(rec.status)).Inc()
		m.latency.WithLabelValues(path, method).Observe(time.Since(start).Seconds())
	})
}

// methodLabel is a request's method as a label: one of the methods RFC
// 9110 defines (and PATCH), else "other". Methods are case-sensitive, so
// "get" is other too.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return m
	}
	return "other"
}

// codeLabel is a status code as a label: the code when net/http names it
// (a closed set of about sixty), else "other".
func codeLabel(code int) string {
	if http.StatusText(code) == "" {
		return "other"
	}
	return strconv.Itoa(code)
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// Flush lets a stream through: gqlgen's SSE transport asks for an http.Flusher.
func (s *statusRecorder) Flush() { _ = http.NewResponseController(s.ResponseWriter).Flush() }
