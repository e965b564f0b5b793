package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics are the server's own request counts and latencies. Every label
// takes its value from a closed set, whatever a client sends, so no
// request can add a series: the route is the registered pattern (never the
// raw URL, so ids do not reach a label) or "unmatched", the method one of
// HTTP's nine or "other", the status one of those net/http names or
// "other". (An open label made /metrics 370 MB after 20,000 requests with
// invented methods.)
type metrics struct {
	registry *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

func newMetrics(reg *prometheus.Registry) *metrics {
	m := &metrics{
		registry: reg,
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

func (m *metrics) instrument(next http.Handler) http.Handler {
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

// operationMetrics counts GraphQL operations by name and type. Names are
// client-chosen, so only a closed set becomes a label: anonymous,
// IntrospectionQuery, unknown (no operation) and the operator's allowlist
// (Config.OperationNames); every other name is "other". Names that arrive
// as persisted queries are not learned: any client can register a query
// (APQ), so learned names would be a client's to choose.
type operationMetrics struct {
	ops     *prometheus.CounterVec
	latency *prometheus.HistogramVec
	names   map[string]bool // read only once built
}

// label is the label for name.
func (o operationMetrics) label(name string) string {
	if o.names[name] {
		return name
	}
	return "other"
}

var _ interface {
	graphql.HandlerExtension
	graphql.ResponseInterceptor
} = operationMetrics{}

func newOperationMetrics(reg *prometheus.Registry, allow []string) operationMetrics {
	names := map[string]bool{"anonymous": true, "unknown": true, "IntrospectionQuery": true}
	for _, n := range allow {
		names[n] = true
	}
	o := operationMetrics{
		names: names,
		ops: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gpugraph_graphql_operations_total",
			Help: "GraphQL operations by operation name, type and whether they answered errors.",
		}, []string{"operation", "type", "errors"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "gpugraph_graphql_operation_duration_seconds",
			Help:    "GraphQL operation latency by operation name.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}, []string{"operation"}),
	}
	reg.MustRegister(o.ops, o.latency)
	return o
}

func (operationMetrics) ExtensionName() string                   { return "OperationMetrics" }
func (operationMetrics) Validate(graphql.ExecutableSchema) error { return nil }

func (o operationMetrics) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	start := time.Now()
	resp := next(ctx)
	name, kind := "unknown", "unknown"
	if graphql.HasOperationContext(ctx) {
		oc := graphql.GetOperationContext(ctx)
		if oc.Operation != nil {
			kind = string(oc.Operation.Operation)
			name = oc.Operation.Name
		}
		if name == "" {
			name = "anonymous"
		}
		name = o.label(name)
	}
	hasErrors := "false"
	if resp != nil && len(resp.Errors) > 0 {
		hasErrors = "true"
	}
	o.ops.WithLabelValues(name, kind, hasErrors).Inc()
	o.latency.WithLabelValues(name).Observe(time.Since(start).Seconds())
	return resp
}
