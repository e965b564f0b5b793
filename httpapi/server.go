// Package httpapi wires gpugraph's HTTP surface: the GraphQL endpoint and
// its playground, the documented REST paths, health and metrics, around one
// store, one resolver tree and the service packages both faces call. (The
// command itself is the root's server.go, package main.)
package httpapi

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"gpugraph/auth"
	"gpugraph/compute"
	"gpugraph/credentials"
	"gpugraph/live"
	"gpugraph/loaders"
	"gpugraph/podmetrics"
	"gpugraph/ratelimit"
	"gpugraph/reqid"
	"gpugraph/resolvers"
	"gpugraph/rest"
	"gpugraph/rest/openapi"
	"gpugraph/store"
	"gpugraph/web"
)

// Config is what the command line sets.
type Config struct {
	Store *store.Store
	// DisableIntrospection turns GraphQL introspection off (the playground needs it on).
	DisableIntrospection bool
	// DisablePlanner answers every GraphQL field through gqlgen, none
	// through a plan (resolvers/plan): the tests compare both ways.
	DisablePlanner bool
	// PlanCheck, when set, has gqlgen marshal every planned answer as well
	// and is called with both (plan.Config.Check): the tests' comparison.
	PlanCheck func(ctx context.Context, root string, planned, gqlgen []byte)
	// The GraphQL limits (README "Limits"); zero means the default.
	ComplexityLimit    int
	DepthLimit         int
	TokenLimit         int
	AliasLimit         int
	RootFieldLimit     int
	MutationFieldLimit int
	ResponseLimit      int // bytes of an answer's data
	RequestTimeout     time.Duration
	// PublicConcurrency is how many /graphql and public REST requests run at
	// once; more wait up to QueueWait, then answer 503. /healthz, /metrics
	// and the agent's reports are outside this budget.
	PublicConcurrency int
	QueueWait         time.Duration
	// OperationNames are the GraphQL operation names /metrics labels by;
	// any other is "other".
	OperationNames []string
	// MetricsSource is where pod metrics are read (the store when nil).
	MetricsSource podmetrics.Source
	// LoaderWait is how long dataloaders collect keys (loaders.DefaultWait when zero).
	LoaderWait time.Duration
	// RateLimits are each credential's budgets per class of work (README
	// "Limits"); a class left out, or with a zero Rate, is not limited.
	RateLimits map[ratelimit.Class]ratelimit.Limit
	// Live serves the subscriptions; the command keeps it to shut the
	// streams down (a fresh one with default limits when nil).
	Live *live.Feed
	// NodeReportKeys is the legacy mode (--node-credentials-required=false):
	// agent reports made with any organization's nodes.report API key are
	// accepted for nodes that have no credential. The zero value — what a
	// server gets unless told otherwise — accepts node credentials only.
	NodeReportKeys bool
	// Tokens signs and verifies access tokens (POST /api/v1/token); nil
	// signs with the key stored in the database, shared by every replica.
	Tokens *auth.Tokens
}

// Defaults fills what cfg leaves zero.
func (cfg Config) withDefaults() Config {
	if cfg.ComplexityLimit == 0 {
		cfg.ComplexityLimit = 200000
	}
	if cfg.DepthLimit == 0 {
		cfg.DepthLimit = 15
	}
	if cfg.TokenLimit == 0 {
		cfg.TokenLimit = 10000
	}
	if cfg.AliasLimit == 0 {
		cfg.AliasLimit = 100
	}
	if cfg.RootFieldLimit == 0 {
		cfg.RootFieldLimit = 20
	}
	if cfg.MutationFieldLimit == 0 {
		cfg.MutationFieldLimit = 10
	}
	if cfg.ResponseLimit == 0 {
		cfg.ResponseLimit = 16 << 20
	}
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = 30 * time.Second
	}
	if cfg.PublicConcurrency == 0 {
		cfg.PublicConcurrency = 64
	}
	if cfg.QueueWait == 0 {
		cfg.QueueWait = 2 * time.Second
	}
	return cfg
}

// New builds the whole HTTP handler.
func New(cfg Config) http.Handler {
	h, _ := newServer(cfg)
	return h
}

// Patterns are the ServeMux patterns New serves, each as registered: the
// list the OpenAPI document is held equal to.
func Patterns(cfg Config) []string {
	_, mux := newServer(cfg)
	return slices.Clone(mux.patterns)
}

func newServer(cfg Config) (http.Handler, *routeMux) {
	cfg = cfg.withDefaults()
	st := cfg.Store
	if cfg.Live == nil {
		cfg.Live = live.New(st, live.Limits{})
	}
	res := &resolvers.Resolver{Store: st, Metrics: cfg.MetricsSource, Live: cfg.Live}
	if cfg.Tokens == nil {
		cfg.Tokens, _ = auth.NewTokens(st, nil, nil) // no key given: cannot fail
	}
	authn := &auth.Authenticator{Store: st, Tokens: cfg.Tokens}
	metrics := newMetrics(prometheus.NewRegistry())
	registerLiveMetrics(metrics.registry, cfg.Live)

	public := newBudget(cfg.PublicConcurrency, cfg.QueueWait)
	rl := newRateLimits(metrics.registry, cfg.RateLimits)
	api := func(h http.Handler) http.Handler {
		return authn.Middleware(rl.wrap(loaders.Middleware(st, cfg.LoaderWait, h)))
	}
	// The agent's reports keep their own path around the public budget, so
	// abuse of /graphql or the pods API cannot starve heartbeats.
	restWrap := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if isAgentPath(r.URL.Path) {
				api(h).ServeHTTP(w, r)
				return
			}
			public.wrap(api(h), writeBusyREST).ServeHTTP(w, r)
		})
	}

	mux := &routeMux{ServeMux: http.NewServeMux()}
	mux.Handle("GET /{$}", web.Handler())
	mux.Handle("GET /assets/", web.Handler())
	gql := newGraphQL(cfg, res, rl)
	gql.Use(newOperationMetrics(metrics.registry, cfg.OperationNames))
	mux.Handle("/graphql", public.wrap(graphQLStatus(withStreamEnd(api(requireCaller(gql)))), writeBusyGraphQL))
	mux.Handle("GET /healthz", healthz(st))
	mux.Handle("GET /readyz", readyz(st))
	mux.Handle("GET /metrics", promhttp.HandlerFor(metrics.registry, promhttp.HandlerOpts{}))
	mux.Handle("GET /openapi.json", openapi.Handler())
	rest.Register(mux, &rest.API{Store: st, Compute: compute.New(st), Metrics: cfg.MetricsSource,
		NodeReportKeys: cfg.NodeReportKeys, Credentials: credentials.New(st, cfg.Tokens)}, restWrap)

	return reqid.Middleware(compress(limitBodies(withTimeout(cfg.RequestTimeout, metrics.instrument(jsonMisses(mux.ServeMux)))))), mux
}

// routeMux is a ServeMux that keeps the patterns registered on it.
type routeMux struct {
	*http.ServeMux
	patterns []string
}

func (m *routeMux) Handle(pattern string, h http.Handler) {
	m.patterns = append(m.patterns, pattern)
	m.ServeMux.Handle(pattern, h)
}

func (m *routeMux) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	m.Handle(pattern, http.HandlerFunc(h))
}

// withTimeout bounds every request but a stream's (a subscription lives
// as long as its client wants); handlers see it through their context.
func withTimeout(d time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isStream(r) {
			next.ServeHTTP(w, r)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), d)
		defer cancel()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}
