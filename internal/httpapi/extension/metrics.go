package extension

import (
	"context"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/prometheus/client_golang/prometheus"
)

// OperationMetrics counts GraphQL operations by name and type. Names are
// client-chosen, so only a closed set becomes a label: anonymous,
// IntrospectionQuery, unknown (no operation) and the operator's allowlist
// (httpapi.Config.OperationNames); every other name is "other". Names that arrive
// as persisted queries are not learned: any client can register a query
// (APQ), so learned names would be a client's to choose.
type OperationMetrics struct {
	ops     *prometheus.CounterVec
	latency *prometheus.HistogramVec
	names   map[string]bool // read only once built
}

// label is the label for name.
func (o OperationMetrics) label(name string) string {
	if o.names[name] {
		return name
	}
	return "other"
}

var _ interface {
	graphql.HandlerExtension
	graphql.ResponseInterceptor
} = OperationMetrics{}

// NewOperationMetrics registers the operations' counts and latencies on
// reg, labelled by the names of allow and the closed set above.
func NewOperationMetrics(reg prometheus.Registerer, allow []string) OperationMetrics {
	names := map[string]bool{"anonymous": true, "unknown": true, "IntrospectionQuery": true}
	for _, n := range allow {
		names[n] = true
	}
	o := OperationMetrics{
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

func (OperationMetrics) ExtensionName() string                   { return "OperationMetrics" }
func (OperationMetrics) Validate(graphql.ExecutableSchema) error { return nil }

func (o OperationMetrics) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
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
