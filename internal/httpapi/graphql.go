package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	gqlextension "github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/prometheus/client_golang/prometheus"

	"gpugraph/graph"
	"gpugraph/internal/fieldmodel"
	"gpugraph/internal/httpapi/extension"
	"gpugraph/internal/httpapi/loaders"
	"gpugraph/internal/httpapi/middleware"
	"gpugraph/internal/httpapi/transport"
	"gpugraph/internal/services/idempotency"
	"gpugraph/internal/services/live"
	"gpugraph/resolvers"
)

// newGraphQL builds the GraphQL executor with the transports gpugraph
// speaks (package transport) and the extensions that keep one query from
// taking the server down (package extension), in the order they run;
// its caches' sizes are registered on reg.
func newGraphQL(cfg Config, res *resolvers.Resolver, g *middleware.Gate, newLoaders loaders.Factory, reg prometheus.Registerer) *handler.Server {
	es := graph.NewExecutableSchema(graph.Config{Resolvers: res})
	extension.SpecDirectiveLocations(es.Schema())
	limits := extension.Limits{
		Schema:            es.Schema(),
		MaxDepth:          cfg.DepthLimit,
		MaxComplexity:     cfg.ComplexityLimit,
		MaxAliases:        cfg.AliasLimit,
		MaxRootFields:     cfg.RootFieldLimit,
		MaxMutationFields: cfg.MutationFieldLimit,
	}
	docs := extension.NewDocuments(es.Schema(), extension.DocumentsConfig{
		Limits: extension.DocLimits{
			MaxFieldsPerSet:   cfg.SelectionLimit,
			MaxRepeats:        cfg.RepeatLimit,
			MaxFields:         cfg.FieldLimit,
			MaxDirectives:     cfg.DirectiveLimit,
			MaxDepth:          cfg.DepthLimit,
			MaxAliases:        cfg.AliasLimit,
			MaxRootFields:     cfg.RootFieldLimit,
			MaxMutationFields: cfg.MutationFieldLimit,
		},
		Operation:       limits,
		MaxBytes:        cfg.DocumentLimit,
		Tokens:          cfg.TokenLimit,
		NoIntrospection: cfg.DisableIntrospection,
		QueryCacheBytes: cfg.QueryCacheBytes,
		APQCacheBytes:   cfg.APQCacheBytes,
	})

	srv := handler.New(es)
	srv.AroundResponses(extension.FreshLoadersPerEvent(newLoaders))
	// The stream transports come before POST, which would take an SSE
	// request for a plain one. OPTIONS is answered before the credential
	// (transport.Methods).
	srv.AddTransport(transport.SSE{})
	srv.AddTransport(transport.Websocket(res.Services.Authenticator, cfg.RequestTimeout))
	srv.AddTransport(transport.GET{})
	srv.AddTransport(transport.POST{})
	srv.AddTransport(transport.Unsupported{})
	// First: a stream's operation is charged before anything else runs.
	srv.Use(extension.StreamBudget{Gate: g, Loaders: newLoaders})
	srv.SetQueryCache(docs.QueryCache())
	// gqlgen's own parse and validation do not run (Documents hands it
	// the document); should they, they keep the same token limit and
	// suggestions.
	srv.SetParserTokenLimit(cfg.TokenLimit)
	srv.SetDisableSuggestion(cfg.DisableIntrospection)
	srv.Use(gqlextension.AutomaticPersistedQuery{Cache: docs.APQCache()})
	srv.Use(docs)
	if cfg.DisableIntrospection {
		srv.Use(extension.NoIntrospection{})
	} else {
		srv.Use(gqlextension.Introspection{})
	}
	srv.Use(limits)
	srv.Use(docs.Admit())
	srv.Use(extension.RestartBudget{Gate: g})
	// Before ResponseCap: it keeps the answer as it is sent.
	srv.Use(extension.Idempotency{Keys: res.Services.Idempotency, Gate: g, Gates: res.MutationGates()})
	srv.Use(extension.DistinctLists{})
	srv.Use(fieldmodel.NarrowLoaders())
	var planner *fieldmodel.Planner
	if !cfg.DisablePlanner {
		planner = fieldmodel.NewPlanner(fieldmodel.Config{Schema: es.Schema(), Check: cfg.PlanCheck, CacheBytes: cfg.PlanCacheBytes})
		srv.Use(planner)
	}
	registerCacheMetrics(reg, docs, planner)
	srv.Use(extension.ResponseCap{Max: cfg.ResponseLimit})
	srv.SetErrorPresenter(extension.PresentError)
	srv.SetRecoverFunc(func(ctx context.Context, p any) error {
		slog.ErrorContext(ctx, "panic in resolver", "panic", p, "path", graphql.GetPath(ctx).String())
		return errors.New("panic")
	})
	srv.Use(extension.NewOperationMetrics(reg, cfg.OperationNames))
	// Last: a kept answer or a key's refusal is answered in place of
	// running the operation, as the extensions above see an answer.
	srv.Use(extension.Replay{})
	return srv
}

// registerCacheMetrics exposes how many entries and bytes the query, APQ
// and plan caches hold (gpugraph_graphql_cache_entries and _bytes), and
// the plans' self-check (gpugraph_graphql_plan_checks_total).
func registerCacheMetrics(reg prometheus.Registerer, docs *extension.Documents, planner *fieldmodel.Planner) {
	stats := func(cache string) (int64, int64) {
		if cache == "plan" {
			if planner == nil {
				return 0, 0
			}
			n, b := planner.CacheStats()
			return int64(n), b
		}
		s := docs.CacheStats()[cache]
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

// graphQLStatus serves /graphql and gives the HTTP status one rule
// (extension.Outcome.Status): an operation refused before it ran (parse
// and validation errors, which gqlgen answers 422, and the limits, which
// it answers 200) answers 400 (or the refusal's own status); one that ran
// out of time answers 504 instead of 200 (the body is GraphQL's: data null
// or partial, one TIMEOUT error); client disconnects are left alone (no one
// reads). Field errors of an operation that ran keep 200, as GraphQL
// servers answer them. A mutation's kept answer given again for its
// idempotency key has the kept answer's status and Idempotent-Replayed:
// true.
func graphQLStatus(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, st := extension.WithOutcome(r.Context())
		tw := &timeoutStatusWriter{ResponseWriter: w, req: st}
		next.ServeHTTP(tw, r.WithContext(ctx))
	})
}

// timeoutStatusWriter holds the status gqlgen sets until the body's first
// byte: gqlgen writes an operation error's status before the error
// presenter has seen the error, and the presenter is what knows its kind.
type timeoutStatusWriter struct {
	http.ResponseWriter
	req     *extension.Outcome
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
	code, retryAfter := t.req.Status(code)
	if retryAfter > 0 {
		t.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	}
	if t.req.Replayed() {
		t.Header().Set(idempotency.ReplayedHeader, "true")
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

// registerLiveMetrics exposes the feed's counters on /metrics.
func registerLiveMetrics(reg *prometheus.Registry, f *live.Feed) {
	reg.MustRegister(
		f.NotifyLag,
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "gpugraph_subscriptions_closed_revoked_total",
			Help: "Streams closed because their API key was revoked or their organization suspended or deleted (close code 4403)."},
			func() float64 { return float64(f.ClosedRevoked.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "gpugraph_subscriptions_open",
			Help: "Open GraphQL subscriptions (vmEvents, nodeEvents) of this process."},
			func() float64 { return float64(f.Open.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "gpugraph_subscription_events_delivered_total",
			Help: "Events handed to subscribers."},
			func() float64 { return float64(f.Delivered.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "gpugraph_subscriptions_dropped_lagging_total",
			Help: "Subscribers closed because they fell a whole buffer behind (close code 4409)."},
			func() float64 { return float64(f.DroppedLagging.Load()) }),
	)
}
