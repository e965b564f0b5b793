// Package httpapi wires gpugraph's HTTP surface: the GraphQL endpoint and
// its playground, the documented REST paths, health and metrics, around one
// Services value (package services) that the command builds once per
// process (services.New, in the root's server.go, package main) and hands
// here, to both faces, as it hands it to the background jobs and the
// command line. It is shaped as gqlgen's graphql/handler: the server and
// its routes here (each route registered with its policy), the GraphQL
// transports in internal/httpapi/transport, the GraphQL extensions in
// internal/httpapi/extension, and the HTTP middleware (the gate,
// compression, metrics) in internal/httpapi/middleware. The edge builds no
// service and knows no store: the probes ask a Database they are handed.
package httpapi

import (
	"context"
	"net/http"
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"gpugraph/internal/auth"
	"gpugraph/internal/fieldmodel"
	"gpugraph/internal/httpapi/loaders"
	"gpugraph/internal/httpapi/middleware"
	"gpugraph/internal/httpapi/rest"
	"gpugraph/internal/httpapi/rest/openapi"
	"gpugraph/internal/httpapi/route"
	"gpugraph/internal/httpapi/transport"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/lib/ratelimit"
	"gpugraph/internal/lib/replicas"
	"gpugraph/internal/lib/reqid"
	"gpugraph/internal/services"
	"gpugraph/resolvers"
	"gpugraph/web"
)

// Config is what the command hands the HTTP layer: what it built once
// for the process (the services, the loaders factory, the store for the
// probes) and what the command line sets.
type Config struct {
	// Services are the process's services, built once by the command
	// (services.New) and shared with its background jobs: both faces and
	// the gate call them.
	Services *services.Services
	// Loaders makes each GraphQL request's dataloaders (loaders.NewFactory),
	// built by the command beside the services.
	Loaders loaders.Factory
	// Database is what /healthz and /readyz ask of the store.
	Database Database
	// DisableIntrospection turns GraphQL introspection off (the playground needs it on).
	DisableIntrospection bool
	// DisablePlanner answers every GraphQL field through gqlgen, none
	// through a plan (fieldmodel.Planner): the tests compare both ways.
	DisablePlanner bool
	// PlanCheck, when set, has gqlgen marshal every planned answer as well
	// and is called with both (fieldmodel.Config.Check): the tests' comparison.
	PlanCheck func(ctx context.Context, root string, planned, gqlgen []byte)
	// The GraphQL limits (docs/decisions/0032-graphql-operation-limits.md); zero means the default.
	ComplexityLimit    int
	DepthLimit         int
	TokenLimit         int
	AliasLimit         int
	RootFieldLimit     int
	MutationFieldLimit int
	ResponseLimit      int // bytes of an answer's data
	DocumentLimit      int // bytes of a query's text
	SelectionLimit     int // fields landing on one object of the answer
	RepeatLimit        int // of those, how many may share a response name
	FieldLimit         int // fields of a document, fragments expanded
	DirectiveLimit     int // directives of a document
	RequestTimeout     time.Duration
	// The bytes the query, APQ and plan caches may hold (docs/decisions/0033-graphql-documents-before-validation.md).
	QueryCacheBytes int64
	APQCacheBytes   int64
	PlanCacheBytes  int64
	// PublicConcurrency is how many /graphql and public REST requests (and
	// queries and mutations over a stream) run at once, CredentialConcurrency
	// how many of them one credential may run (DefaultCredentialConcurrency);
	// more wait up to QueueWait, then answer 503 (429 for a credential at its
	// share). /healthz, /metrics and the agent's reports are outside this
	// budget.
	PublicConcurrency     int
	CredentialConcurrency int
	QueueWait             time.Duration
	// BodyTimeout is how long a request's body may take to arrive once its
	// headers are in (408 after); it is read before the request takes a
	// slot. BodyMemory bounds the bytes of bodies held at once (a quarter of
	// it per credential).
	BodyTimeout time.Duration
	BodyMemory  int64
	// WebSocketInitTimeout is how long an upgraded WebSocket may take to
	// send connection_init (closed with 4408 after). WebSocketsPerAddress
	// and WebSocketsPerCredential cap the connections open at once from one
	// client address (429 on the upgrade; negative: no cap) and of one
	// credential (4429 at connection_init).
	WebSocketInitTimeout    time.Duration
	WebSocketsPerAddress    int
	WebSocketsPerCredential int
	// OperationNames are the GraphQL operation names /metrics labels by;
	// any other is "other".
	OperationNames []string
	// RateLimits are each credential's budgets per class of work
	// (docs/decisions/0037-rate-limits.md) for the whole deployment; a class left
	// out, or with a zero
	// Rate, is not limited.
	RateLimits map[ratelimit.Class]ratelimit.Limit
	// Replicas counts the deployment's live server processes: this one's
	// buckets hold 1/N of RateLimits (ratelimit.Limiter.SetReplicas). Nil
	// is a process alone, holding all of them.
	Replicas *replicas.Heartbeat

	// loadersBuilt, when set (by the tests, CountLoaders), counts the
	// dataloaders the server builds: /graphql's requests, operations and
	// events build them, no REST request or agent report does.
	loadersBuilt *atomic.Int64
}

// Defaults fills what cfg leaves zero.
func (cfg Config) withDefaults() Config {
	orDefault(&cfg.ComplexityLimit, 200000)
	orDefault(&cfg.DepthLimit, 15)
	orDefault(&cfg.TokenLimit, 10000)
	orDefault(&cfg.AliasLimit, 100)
	orDefault(&cfg.RootFieldLimit, 20)
	orDefault(&cfg.MutationFieldLimit, 10)
	orDefault(&cfg.ResponseLimit, 16<<20)
	orDefault(&cfg.DocumentLimit, 256<<10)
	orDefault(&cfg.SelectionLimit, 100)
	orDefault(&cfg.RepeatLimit, 20)
	orDefault(&cfg.FieldLimit, 2000)
	orDefault(&cfg.DirectiveLimit, 50)
	orDefault(&cfg.QueryCacheBytes, 64<<20)
	orDefault(&cfg.APQCacheBytes, 16<<20)
	orDefault(&cfg.PlanCacheBytes, fieldmodel.CacheBytes)
	orDefault(&cfg.RequestTimeout, 30*time.Second)
	orDefault(&cfg.PublicConcurrency, 64)
	orDefault(&cfg.CredentialConcurrency, DefaultCredentialConcurrency())
	orDefault(&cfg.QueueWait, 2*time.Second)
	orDefault(&cfg.BodyTimeout, DefaultBodyTimeout)
	orDefault(&cfg.BodyMemory, 256<<20)
	orDefault(&cfg.WebSocketInitTimeout, 5*time.Second)
	orDefault(&cfg.WebSocketsPerAddress, 64)
	orDefault(&cfg.WebSocketsPerCredential, 32)
	return cfg
}

// DefaultCredentialConcurrency is Config.CredentialConcurrency's default
// (--credential-concurrency): half the cores the process may run on, at
// least one. The requests one credential runs at once each take a core
// while they compute (a document parsed and refused, an answer written),
// so holding them to half the cores leaves the other half to every other
// tenant whatever one key sends at once: a hundred heavy requests from one
// key wait their turn (up to QueueWait) instead of sharing the cores with
// everyone's.
func DefaultCredentialConcurrency() int { return max(1, runtime.GOMAXPROCS(0)/2) }

// DefaultBodyTimeout is Config.BodyTimeout's default (--body-timeout): a
// 32 MiB sample batch arrives within it at 3.2 MB/s.
const DefaultBodyTimeout = 10 * time.Second

// orDefault sets *v to def when it is zero.
func orDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
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
	// The services come built (one per process, the command's): both faces
	// get the same value.
	svc := cfg.Services
	res := &resolvers.Resolver{Services: svc}
	reg := prometheus.NewRegistry()
	metrics := middleware.NewMetrics(reg)
	registerLiveMetrics(reg, svc.Live)
	reg.MustRegister(svc.Metering.Collectors()...)

	rl := middleware.NewRateLimits(reg, cfg.RateLimits)
	if cfg.Replicas != nil {
		cfg.Replicas.Watch(rl.SetReplicas)
	}
	newLoaders := cfg.Loaders
	if n := cfg.loadersBuilt; n != nil {
		built := newLoaders
		newLoaders = func(c *auth.Caller) *loaders.Loaders { n.Add(1); return built(c) }
	}
	g := middleware.NewGate(middleware.GateConfig{
		RequestTimeout: cfg.RequestTimeout, QueueWait: cfg.QueueWait,
		PublicConcurrency: cfg.PublicConcurrency, CredentialConcurrency: cfg.CredentialConcurrency,
		BodyTimeout: cfg.BodyTimeout, BodyMemory: cfg.BodyMemory,
		WebSocketsPerAddress: cfg.WebSocketsPerAddress, WebSocketsPerCredential: cfg.WebSocketsPerCredential,
		Authenticator: svc.Authenticator, RateLimits: rl, Registry: reg,
		IsStream: transport.IsStream, IsWebsocket: transport.IsWebsocket,
	})

	// Every route is registered here with its policy (middleware.Route):
	// its body bound, rate class, whether it is public traffic, and the
	// API whose shape its refusals take. No middleware reads the path.
	mux := &routeMux{ServeMux: http.NewServeMux()}
	mux.Handle("GET /{$}", web.Handler())
	mux.Handle("GET /assets/", web.Handler())
	console := web.Console()
	mux.Handle("GET /console", console)
	mux.Handle("GET /console/", console)
	gql := newGraphQL(cfg, res, g, newLoaders, reg)
	conns := transport.Conns{InitTimeout: cfg.WebSocketInitTimeout, Admit: g.AdmitWebsocket, InitTimedOut: g.WebsocketInitTimedOut}
	graphQLRoute := middleware.Route{Policy: route.Policy{MaxBody: MaxGraphQLBody}, API: "graphql", WriteError: transport.WriteError, Streams: true}
	// Only /graphql builds dataloaders, once its caller is known: its
	// resolvers read through them (loaders.For); REST handlers and the
	// agents' reports call the services, which read the store directly.
	// A stream's operations and a subscription's events get fresh ones
	// (extension.StreamBudget, FreshLoadersPerEvent).
	mux.Handle("/graphql", refuseAnnouncedOversize(MaxGraphQLBody, g.Route(graphQLRoute, transport.Methods(graphQLStatus(conns.Streams(requireCaller(newLoaders.Middleware(gql))))))))
	mux.Handle("GET /healthz", healthz(cfg.Database))
	mux.Handle("GET /readyz", readyz(cfg.Database))
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.Handle("GET /openapi.json", openapi.Handler())
	rest.Register(mux, &rest.API{Services: svc}, func(p route.Policy, h http.Handler) http.Handler {
		return g.Route(middleware.Route{Policy: p, API: string(p.API), WriteError: p.API.WriteError}, h)
	})

	return reqid.Middleware(middleware.Compress(transport.IsStream, metrics.Instrument(middleware.JSONMisses(mux)))), mux
}

// Body limits, in bytes (docs/decisions/0035-http-time-bodies-and-connections.md), besides the REST routes' own
// (route.Policy): every request body is read through http.MaxBytesReader.
const (
	MaxGraphQLBody = 1 << 20             // a GraphQL request (query, variables, extensions)
	MaxSamplesBody = rest.MaxSamplesBody // POST /api/v1/metrics/samples
)

// refuseAnnouncedOversize answers a GraphQL request whose announced body
// is over max at once (413 in GraphQL's shape), before it is read; the
// REST handlers answer theirs in their own words.
func refuseAnnouncedOversize(max int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > max {
			transport.WriteError(w, r, apierr.New(http.StatusRequestEntityTooLarge, apierr.PayloadTooLarge, "the request body is larger than the limit of %d bytes", max))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// requireCaller answers 401 to a GraphQL request without a valid key, with
// the error in GraphQL's shape, before any query is parsed.
func requireCaller(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if transport.IsWebsocket(r) { // authenticates in connection_init
			next.ServeHTTP(w, r)
			return
		}
		if _, err := auth.Authenticate(r.Context()); err != nil {
			e, _ := apierr.As(err)
			if e.Status == http.StatusUnauthorized {
				route.SetChallenge(w, r)
			}
			transport.WriteError(w, r, e)
			return
		}
		next.ServeHTTP(w, r)
	})
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

// Patterns are the patterns registered, in order (middleware.Mux).
func (m *routeMux) Patterns() []string { return m.patterns }

func (m *routeMux) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	m.Handle(pattern, http.HandlerFunc(h))
}
