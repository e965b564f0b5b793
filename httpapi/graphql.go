package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"gpugraph/apierr"
	"gpugraph/fieldmodel"
	"gpugraph/graph"
	"gpugraph/reqid"
	"gpugraph/resolvers"
)

// newGraphQL builds the GraphQL executor with the transports gpugraph
// speaks and the limits that keep one query from taking the server down;
// its caches' sizes are registered on reg.
func newGraphQL(cfg Config, res *resolvers.Resolver, g *gate, reg prometheus.Registerer) *handler.Server {
	es := graph.NewExecutableSchema(graph.Config{Resolvers: res})
	specDirectiveLocations(es.Schema())
	limits := Limits{
		Schema:            es.Schema(),
		MaxDepth:          cfg.DepthLimit,
		MaxComplexity:     cfg.ComplexityLimit,
		MaxAliases:        cfg.AliasLimit,
		MaxRootFields:     cfg.RootFieldLimit,
		MaxMutationFields: cfg.MutationFieldLimit,
	}
	checks := []func(*ast.OperationDefinition, map[string]any) *gqlerror.Error{limits.check}
	if cfg.DisableIntrospection {
		checks = append(checks, noIntrospection{}.check)
	}
	docs := newDocuments(es.Schema(), cfg, docLimits{
		MaxFieldsPerSet:   cfg.SelectionLimit,
		MaxRepeats:        cfg.RepeatLimit,
		MaxFields:         cfg.FieldLimit,
		MaxDirectives:     cfg.DirectiveLimit,
		MaxDepth:          cfg.DepthLimit,
		MaxAliases:        cfg.AliasLimit,
		MaxRootFields:     cfg.RootFieldLimit,
		MaxMutationFields: cfg.MutationFieldLimit,
	}, checks...)

	srv := handler.New(es)
	addLive(srv, cfg, g)
	// OPTIONS is answered before the credential (graphQLMethods).
	srv.AddTransport(getQuery{})
	srv.AddTransport(postJSON{})
	srv.AddTransport(unsupported{})
	// First: a stream's operation is charged before anything else runs.
	srv.Use(streamBudget{g: g})
	srv.SetQueryCache(queryCache{docs})
	// gqlgen's own parse and validation do not run (documents hands it
	// the document); should they, they keep the same token limit and
	// suggestions.
	srv.SetParserTokenLimit(cfg.TokenLimit)
	srv.SetDisableSuggestion(cfg.DisableIntrospection)
	srv.Use(extension.AutomaticPersistedQuery{Cache: apqCache{docs}})
	srv.Use(docs)
	if cfg.DisableIntrospection {
		srv.Use(noIntrospection{})
	} else {
		srv.Use(extension.Introspection{})
	}
	srv.Use(limits)
	srv.Use(admitDocuments{docs})
	srv.Use(restartBudget{rl: g.rl})
	srv.Use(distinctLists{})
	srv.Use(fieldmodel.NarrowLoaders())
	var planner *fieldmodel.Planner
	if !cfg.DisablePlanner {
		planner = fieldmodel.NewPlanner(fieldmodel.Config{Schema: es.Schema(), Check: cfg.PlanCheck, CacheBytes: cfg.PlanCacheBytes})
		srv.Use(planner)
	}
	registerCacheMetrics(reg, docs, planner)
	srv.Use(responseCap{max: cfg.ResponseLimit})
	srv.SetErrorPresenter(presentError)
	srv.SetRecoverFunc(func(ctx context.Context, p any) error {
		slog.ErrorContext(ctx, "panic in resolver", "panic", p, "path", graphql.GetPath(ctx).String())
		return errors.New("panic")
	})
	return srv
}

// registerCacheMetrics exposes how many entries and bytes the query, APQ
// and plan caches hold (gpugraph_graphql_cache_entries and _bytes), and
// the plans' self-check (gpugraph_graphql_plan_checks_total).
func registerCacheMetrics(reg prometheus.Registerer, docs *documents, planner *fieldmodel.Planner) {
	stats := func(cache string) (int64, int64) {
		if cache == "plan" {
			if planner == nil {
				return 0, 0
			}
			n, b := planner.CacheStats()
			return int64(n), b
		}
		s := docs.cacheStats()[cache]
		return s[0], s[1]
	}
	// The plans' self-check (fieldmodel.Planner.Checks): the first answer
	// of each cached plan compared with gqlgen's.
	for _, result := range []string{"same", "diverged"} {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "gpugraph_graphql_plan_checks_total",
			Help:        "Plans whose first answer was compared with gqlgen's marshalling of the same rows, by outcome; a diverged plan is not used again.",
			ConstLabels: prometheus.Labels{"result": result},
		}, func() float64 {
			if planner == nil {
				return 0
			}
			same, diverged := planner.Checks()
			if result == "same" {
				return float64(same)
			}
			return float64(diverged)
		}))
	}
	for _, cache := range []string{"query", "apq", "plan"} {
		reg.MustRegister(
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name:        "gpugraph_graphql_cache_entries",
				Help:        "Entries the GraphQL query, APQ and plan caches hold.",
				ConstLabels: prometheus.Labels{"cache": cache},
			}, func() float64 { n, _ := stats(cache); return float64(n) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name:        "gpugraph_graphql_cache_bytes",
				Help:        "Estimated bytes of heap the GraphQL query, APQ and plan caches hold.",
				ConstLabels: prometheus.Labels{"cache": cache},
			}, func() float64 { _, b := stats(cache); return float64(b) }),
		)
	}
}

// gqlRequest is what one GraphQL request's errors share: whether it ran out
// of time (the answer is then a 504, and the timeout is logged once, not
// once per field that saw it).
type gqlRequest struct {
	timedOut atomic.Bool
	logOnce  sync.Once
	// refused is the status of an error that refused the whole operation
	// before it ran (parse, validation, a limit) or its answer (the
	// response cap): the HTTP status then says it too.
	refused atomic.Int32
	// retryAfter, in seconds, is sent as Retry-After with a refusal (429).
	retryAfter atomic.Int32
}

type gqlRequestKey struct{}

func gqlRequestOf(ctx context.Context) *gqlRequest {
	s, _ := ctx.Value(gqlRequestKey{}).(*gqlRequest)
	return s
}

// graphQLStatus serves /graphql and gives the HTTP status one rule: an
// operation refused before it ran (parse and validation errors, which
// gqlgen answers 422, and the limits, which it answers 200) answers 400 (or
// the refusal's own status); one that ran out of time answers 504 instead
// of 200 (the body is GraphQL's: data null or partial, one TIMEOUT error);
// client disconnects are left alone (no one reads). Field errors of an
// operation that ran keep 200, as GraphQL servers answer them.
func graphQLStatus(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st := &gqlRequest{}
		tw := &timeoutStatusWriter{ResponseWriter: w, req: st}
		next.ServeHTTP(tw, r.WithContext(context.WithValue(r.Context(), gqlRequestKey{}, st)))
	})
}

// timeoutStatusWriter holds the status gqlgen sets until the body's first
// byte: gqlgen writes an operation error's status before the error
// presenter has seen the error, and the presenter is what knows its kind.
type timeoutStatusWriter struct {
	http.ResponseWriter
	req     *gqlRequest
	pending int
	wrote   bool
}

func (t *timeoutStatusWriter) WriteHeader(code int) {
	if t.wrote || t.pending != 0 {
		return
	}
	if code < 200 {
		t.ResponseWriter.WriteHeader(code)
		return
	}
	t.pending = code
}

func (t *timeoutStatusWriter) commit() {
	if t.wrote {
		return
	}
	t.wrote = true
	code := t.pending
	if code == 0 {
		code = http.StatusOK
	}
	switch {
	case code == http.StatusUnprocessableEntity:
		code = http.StatusBadRequest
	case code == http.StatusOK && t.req.timedOut.Load():
		code = http.StatusGatewayTimeout
	case code == http.StatusOK && t.req.refused.Load() != 0:
		code = int(t.req.refused.Load())
		if s := t.req.retryAfter.Load(); s > 0 {
			t.Header().Set("Retry-After", strconv.Itoa(int(s)))
		}
	}
	t.ResponseWriter.WriteHeader(code)
}

// Flush lets a subscription's SSE stream through: it flushes each event.
func (t *timeoutStatusWriter) Flush() {
	t.commit()
	_ = http.NewResponseController(t.ResponseWriter).Flush()
}

func (t *timeoutStatusWriter) Write(b []byte) (int, error) {
	t.commit()
	return t.ResponseWriter.Write(b)
}

func (t *timeoutStatusWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }

// apqNotFound is the message of gqlgen's answer to an unknown APQ hash.
const apqNotFound = "PersistedQueryNotFound"

// TimeoutCode is extensions.code of the error a GraphQL request that ran out
// of time answers.
const TimeoutCode = "TIMEOUT"

// presentError renders every error with extensions.code and
// extensions.status. Errors of apierr say what they say; parse and
// validation errors of the query are the caller's (400); a request out of
// time is one TIMEOUT (504); anything else is internal, logged here and
// never shown.
func presentError(ctx context.Context, err error) *gqlerror.Error {
	gqlErr := presentKind(ctx, err)
	if id := reqid.From(ctx); id != "" {
		if gqlErr.Extensions == nil {
			gqlErr.Extensions = map[string]any{}
		}
		gqlErr.Extensions["requestId"] = id
	}
	return gqlErr
}

func presentKind(ctx context.Context, err error) *gqlerror.Error {
	gqlErr := graphql.DefaultErrorPresenter(ctx, err)
	if e, ok := apierr.As(err); ok {
		gqlErr.Message = e.Message
		gqlErr.Extensions = map[string]any{"code": e.Code, "status": e.Status}
		if e.Details != "" {
			gqlErr.Extensions["details"] = e.Details
		}
		if e.RetryAfter > 0 {
			// What REST sends as the Retry-After header.
			gqlErr.Extensions["retryAfter"] = e.RetryAfter
		}
		return gqlErr
	}
	var q *gqlerror.Error
	if errors.As(err, &q) && q.Unwrap() == nil {
		// The operation's own errors: ours (limits, introspection) say their
		// status already; gqlgen's parse and validation errors are a 400.
		if _, set := q.Extensions["status"]; !set {
			gqlErr.Extensions = map[string]any{"code": apierr.BadRequestCode, "status": http.StatusBadRequest}
		}
		// No path: it refused the operation, not one field of it. An
		// unknown persisted-query hash is not a refusal but a step of the
		// APQ protocol, which clients expect with a 200.
		if st := gqlRequestOf(ctx); st != nil && len(q.Path) == 0 && q.Message != apqNotFound {
			if status, ok := gqlErr.Extensions["status"].(int); ok {
				st.refused.CompareAndSwap(0, int32(status))
			}
		}
		return gqlErr
	}
	if ctxErr := ctx.Err(); ctxErr != nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		st := gqlRequestOf(ctx)
		gone := errors.Is(ctxErr, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
		if st != nil {
			if !gone {
				st.timedOut.Store(true)
			}
			st.logOnce.Do(func() {
				if gone {
					slog.InfoContext(ctx, "graphql: client went away; request abandoned")
				} else {
					slog.WarnContext(ctx, "graphql: request ran out of time", "path", gqlErr.Path.String())
				}
			})
		}
		gqlErr.Message = "the request ran out of time"
		gqlErr.Extensions = map[string]any{"code": TimeoutCode, "status": http.StatusGatewayTimeout}
		return gqlErr
	}
	slog.ErrorContext(ctx, "internal error", "err", err, "path", gqlErr.Path.String())
	gqlErr.Message = "internal error"
	gqlErr.Extensions = map[string]any{"code": apierr.Internal, "status": http.StatusInternalServerError}
	return gqlErr
}

// responseCap answers one error instead of data larger than max bytes, and
// folds the per-field errors of a request that ran out of time into one.
type responseCap struct{ max int }

var _ interface {
	graphql.HandlerExtension
	graphql.ResponseInterceptor
} = responseCap{}

func (responseCap) ExtensionName() string                   { return "ResponseCap" }
func (responseCap) Validate(graphql.ExecutableSchema) error { return nil }

func (c responseCap) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	if resp == nil {
		return nil
	}
	if st := gqlRequestOf(ctx); st != nil && st.timedOut.Load() {
		// One error, not one per alias that saw the deadline.
		var first *gqlerror.Error
		for _, e := range resp.Errors {
			if e.Extensions["code"] == TimeoutCode {
				first = e
				break
			}
		}
		if first != nil {
			first.Path = nil
			resp.Errors = gqlerror.List{first}
			resp.Data = []byte("null")
		}
		return resp
	}
	if c.max > 0 && len(resp.Data) > c.max {
		err := gqlerror.Errorf("the answer is larger than %d bytes; ask fewer fields or a smaller limit", c.max)
		err.Extensions = map[string]any{"code": "RESPONSE_TOO_LARGE", "status": http.StatusBadRequest}
		if id := reqid.From(ctx); id != "" {
			err.Extensions["requestId"] = id
		}
		if st := gqlRequestOf(ctx); st != nil {
			st.refused.CompareAndSwap(0, http.StatusBadRequest)
		}
		return &graphql.Response{Errors: gqlerror.List{err}, Data: []byte("null")}
	}
	return resp
}
