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
	"gpugraph/ratelimit"
	"gpugraph/reqid"
	"gpugraph/rest"
)

// RateLimitedCode is the code of a 429 in every API's shape.
const RateLimitedCode = "RATE_LIMITED"

// rateLimits holds each credential to its per-class budgets (README
// "Limits") and counts the refusals.
type rateLimits struct {
	lim     *ratelimit.Limiter
	refused *prometheus.CounterVec
}

func newRateLimits(reg *prometheus.Registry, limits map[ratelimit.Class]ratelimit.Limit) *rateLimits {
	r := &rateLimits{
		lim: ratelimit.New(limits, nil),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gpugraph_rate_limited_total",
			Help: "Requests refused 429 for their credential's rate limit, by class (api, restart, ingest) and face (graphql, runai, openrelay).",
		}, []string{"class", "face"}),
	}
	reg.MustRegister(r.refused)
	for _, c := range ratelimit.Classes {
		for _, f := range []string{"graphql", "runai", "openrelay"} {
			r.refused.WithLabelValues(string(c), f) // every series from the start
		}
	}
	return r
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

// classOf is the class a REST request spends besides api, "" for none.
func classOf(r *http.Request) ratelimit.Class {
	if r.Method != http.MethodPost {
		return ""
	}
	switch {
	case r.URL.Path == "/api/v1/metrics/samples":
		return ratelimit.Ingest
	case strings.HasPrefix(r.URL.Path, "/v1/vms/") && strings.HasSuffix(r.URL.Path, "/restart"):
		return ratelimit.Restart
	}
	return ""
}

// wrap refuses a request whose credential is over its budget, after the
// key is known (an unknown key answers 401, not 429) and before any work.
// The agent's reports are infrastructure with their own budget, not a
// tenant's traffic: they are not limited here.
func (rl *rateLimits) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := auth.FromContext(r.Context())
		if c == nil || isAgentPath(r.URL.Path) || isWebsocket(r) {
			next.ServeHTTP(w, r)
			return
		}
		for _, class := range []ratelimit.Class{classOf(r), ratelimit.API} {
			if class == "" {
				continue
			}
			if ok, after := rl.lim.Allow(limitKey(c), class, 1); !ok {
				rl.refuse(w, r, rateLimitedError(class, after), class)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (rl *rateLimits) refuse(w http.ResponseWriter, r *http.Request, e *apierr.Error, class ratelimit.Class) {
	face := faceOf(r.URL.Path)
	rl.refused.WithLabelValues(string(class), face).Inc()
	switch face {
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
	(&costWalker{}).eachRoot(oc.Operation.SelectionSet, func(f *ast.Field) {
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
	e := rateLimitedError(ratelimit.Restart, after)
	err := gqlerror.Errorf("%s", e.Message)
	err.Extensions = map[string]any{"code": e.Code, "status": e.Status, "retryAfter": e.RetryAfter}
	if id := reqid.From(ctx); id != "" {
		err.Extensions["requestId"] = id
	}
	if st := gqlRequestOf(ctx); st != nil {
		st.retryAfter.Store(int32(after))
	}
	return err
}
