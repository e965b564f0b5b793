package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics are the server's own request counts and latencies. Paths are
// labelled by route pattern, never by raw URL, so ids do not explode the
// label set.
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
		m.requests.WithLabelValues(path, r.Method, strconv.Itoa(rec.status)).Inc()
		m.latency.WithLabelValues(path, r.Method).Observe(time.Since(start).Seconds())
	})
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
// client-chosen, so only a bounded set becomes a label: the names of the
// allowlist (Config.OperationNames), and the first maxPersistedNames names
// of operations that arrived as persisted queries (APQ: a hash the server
// already knew, i.e. a client that registered its operations); every other
// name is "other".
type operationMetrics struct {
	ops     *prometheus.CounterVec
	latency *prometheus.HistogramVec
	names   *nameSet
}

// maxPersistedNames bounds the names learned from persisted queries.
const maxPersistedNames = 100

type nameSet struct {
	mu      sync.Mutex
	allowed map[string]bool
	learned int
}

// label is the label for name; persisted says the operation came as a
// persisted query.
func (n *nameSet) label(name string, persisted bool) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.allowed[name] {
		return name
	}
	if persisted && n.learned < maxPersistedNames && len(name) <= 64 {
		n.allowed[name] = true
		n.learned++
		return name
	}
	return "other"
}

var _ interface {
	graphql.HandlerExtension
	graphql.ResponseInterceptor
} = operationMetrics{}

func newOperationMetrics(reg *prometheus.Registry, allow []string) operationMetrics {
	names := &nameSet{allowed: map[string]bool{"anonymous": true, "unknown": true, "IntrospectionQuery": true}}
	for _, n := range allow {
		names.allowed[n] = true
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
		// A persisted query that hit the server's cache came without its
		// text (gqlgen's APQ stats say so).
		persisted := false
		if s := extension.GetApqStats(ctx); s != nil && !s.SentQuery {
			persisted = true
		}
		name = o.names.label(name, persisted)
	}
	hasErrors := "false"
	if resp != nil && len(resp.Errors) > 0 {
		hasErrors = "true"
	}
	o.ops.WithLabelValues(name, kind, hasErrors).Inc()
	o.latency.WithLabelValues(name).Observe(time.Since(start).Seconds())
	return resp
}
