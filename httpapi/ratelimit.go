package httpapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"gpugraph/apierr"
	"gpugraph/auth"
	"gpugraph/fieldmodel"
	"gpugraph/ratelimit"
	"gpugraph/reqid"
	"gpugraph/rest"
)

// RateLimitedCode is the code of a 429 in every API's shape.
const RateLimitedCode = "RATE_LIMITED"

// rateLimits holds each credential to its per-class budgets (README
// "Limits"), this process's share of them when several replicas serve,
// and counts the refusals.
type rateLimits struct {
	lim      *ratelimit.Limiter
	refused  *prometheus.CounterVec
	replicas prometheus.Gauge
}

func newRateLimits(reg *prometheus.Registry, limits map[ratelimit.Class]ratelimit.Limit) *rateLimits {
	r := &rateLimits{
		lim: ratelimit.New(limits, nil),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gpugraph_rate_limited_total",
			Help: "Requests refused 429 for their credential's rate limit, by class (api, restart, ingest) and face (graphql, runai, openrelay).",
		}, []string{"class", "face"}),
		replicas: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "gpugraph_replicas",
			Help: "Server processes live in the deployment at this one's last heartbeat (server_replicas); each holds 1/N of every rate limit.",
		}),
	}
	r.replicas.Set(1)
	reg.MustRegister(r.refused, r.replicas)
	for _, c := range ratelimit.Classes {
		for _, f := range []string{"graphql", "runai", "openrelay"} {
			r.refused.WithLabelValues(string(c), f) // every series from the start
		}
	}
	return r
}

// setReplicas takes this process's share of the limits with n replicas
// live, this one the rank-th (replicas.Heartbeat.Watch).
func (rl *rateLimits) setReplicas(n, rank int) {
	rl.lim.SetReplicas(n, rank)
	rl.replicas.Set(float64(n))
}

// limitKey names the caller's bucket: its credential, else (a caller
// made without one) its organization.
func limitKey(c *auth.Caller) string {
	if c.KeyID != "" {
		return "key:" + c.KeyID
	}
	return "org:" + c.OrganizationID
}

func faceOf(path string) string {
	switch {
	case path == "/graphql":
		return "graphql"
	case strings.HasPrefix(path, "/api/"):
		return "runai"
	}
	return "openrelay"
}

func rateLimitedError(class ratelimit.Class, retryAfter int) *apierr.Error {
	what := "requests"
	switch class {
	case ratelimit.Restart:
		what = "restarts"
	case ratelimit.Ingest:
		what = "metric ingestions"
	}
	e := apierr.New(http.StatusTooManyRequests, RateLimitedCode, "this credential sent more %s than its rate limit allows; retry in %d s", what, retryAfter)
	e.RetryAfter = retryAfter
	return e
}

// limit refuses a request whose credential is over its budget (the api
// class, and the class p names besides), after the key is known (an
// unknown key answers 401, not 429) and before any work. The agents'
// reports are infrastructure with their own budget, not a tenant's
// traffic: they are not limited here. A stream's operations are charged
// one by one (streamBudget), not its upgrade.
func (rl *rateLimits) limit(p rest.Policy, next http.Handler) http.Handler {
	if p.Infrastructure {
		return next
	}
	classes := []ratelimit.Class{ratelimit.API}
	if p.Rate != "" {
		classes = []ratelimit.Class{p.Rate, ratelimit.API}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := auth.FromContext(r.Context())
		if c == nil || onStream(r.Context()) {
			next.ServeHTTP(w, r)
			return
		}
		for _, class := range classes {
			if ok, after := rl.lim.Allow(limitKey(c), class, 1); !ok {
				rl.refuse(w, r, rateLimitedError(class, after), class)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (rl *rateLimits) refuse(w http.ResponseWriter, r *http.Request, e *apierr.Error, class ratelimit.Class) {
	rl.refused.WithLabelValues(string(class), faceOf(r.URL.Path)).Inc()
	writeAPIError(w, r, e)
}

// writeAPIError answers e alone in the shape of the API r's path falls
// under: GraphQL's, Run:ai's under /api/, OpenRelay's elsewhere.
func writeAPIError(w http.ResponseWriter, r *http.Request, e *apierr.Error) {
	switch faceOf(r.URL.Path) {
	case "graphql":
		writeGraphQLAPIError(w, r, e)
	case "runai":
		rest.WriteRunaiError(w, r, e)
	default:
		rest.WriteOpenRelayError(w, r, e)
	}
}

// restartBudget spends one restart token per restartVm of a mutation,
// before any runs: a mutation of ten restarts over the budget is refused
// whole (HTTP 429), not cut half-way.
type restartBudget struct{ rl *rateLimits }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = restartBudget{}

func (restartBudget) ExtensionName() string                   { return "RestartBudget" }
func (restartBudget) Validate(graphql.ExecutableSchema) error { return nil }

func (b restartBudget) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation == nil || oc.Operation.Operation != ast.Mutation || !b.rl.lim.Enabled(ratelimit.Restart) {
		return nil
	}
	c := auth.FromContext(ctx)
	if c == nil {
		return nil
	}
	keys := map[string]bool{}
	fieldmodel.Roots(oc.Operation.SelectionSet, func(f *ast.Field) {
		if f.Name == "restartVm" {
			keys[f.Alias] = true
		}
	})
	if len(keys) == 0 {
		return nil
	}
	ok, after := b.rl.lim.Allow(limitKey(c), ratelimit.Restart, len(keys))
	if ok {
		return nil
	}
	b.rl.refused.WithLabelValues(string(ratelimit.Restart), "graphql").Inc()
	return operationError(ctx, rateLimitedError(ratelimit.Restart, after))
}

// operationError is e refusing a whole operation, rendered as presentError
// renders it (code, status, retryAfter, requestId): gqlgen hands an
// extension's refusal to the transport as it is. Over HTTP the answer's
// status (and Retry-After) says it too.
func operationError(ctx context.Context, e *apierr.Error) *gqlerror.Error {
	err := gqlerror.Errorf("%s", e.Message)
	err.Extensions = map[string]any{"code": e.Code, "status": e.Status}
	if e.RetryAfter > 0 {
		err.Extensions["retryAfter"] = e.RetryAfter
	}
	if id := reqid.From(ctx); id != "" {
		err.Extensions["requestId"] = id
	}
	if st := gqlRequestOf(ctx); st != nil && e.RetryAfter > 0 {
		st.retryAfter.Store(int32(e.RetryAfter))
	}
	return err
}
