// Command gpugraph is the control-plane API of a GPU cloud: GraphQL for the
// playground and front-end apps, and the documented REST paths of
// OpenRelay's restart and Run:ai's pods APIs, over one store.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"gpugraph/demo"
	"gpugraph/demo/agents"
	"gpugraph/internal/auth"
	"gpugraph/internal/dataset"
	"gpugraph/internal/httpapi"
	"gpugraph/internal/httpapi/loaders"
	"gpugraph/internal/lib/connlimit"
	"gpugraph/internal/lib/ratelimit"
	"gpugraph/internal/lib/replicas"
	"gpugraph/internal/lib/reqid"
	"gpugraph/internal/services"
	"gpugraph/internal/services/compute"
	"gpugraph/internal/services/credentials"
	"gpugraph/internal/services/live"
	"gpugraph/internal/services/metering"
	"gpugraph/internal/services/podmetrics"
	"gpugraph/internal/services/pods"
	"gpugraph/internal/services/promsource"
	"gpugraph/internal/services/scheduler"
	"gpugraph/internal/services/sweep"
	"gpugraph/internal/store"
)

// maxHeaderBytes bounds a request's headers (net/http answers 431 past
// it, plus the 4 KiB it allows over): a bearer token and the usual headers
// take a few KiB; net/http's default is 1 MiB.
const maxHeaderBytes = 64 << 10

func main() {
	if err := run(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "gpugraph:", err)
		os.Exit(1)
	}
}

type options struct {
	addr, databaseURL, fixtures string
	demo, introspection         bool
	// demoExplicit is whether --demo was given: a PostgreSQL database
	// loads the demo (whose keys are public) only then.
	demoExplicit            bool
	tokenSigningKey         string
	tokenSigningKeyPrevious string
	nodeCredentialsRequired bool
	heartbeatGrace          time.Duration
	sweepInterval           time.Duration
	provisionTimeout        time.Duration
	teardownGrace           time.Duration
	pendingTimeout          time.Duration
	maxPendingPerOrg        int
	spendLimitCentsPerHour  int64
	schedulerInterval       time.Duration
	meteringInterval        time.Duration
	shutdownTimeout         time.Duration
	readTimeout             time.Duration
	readHeaderTimeout       time.Duration
	writeTimeout            time.Duration
	bodyTimeout             time.Duration
	maxConns, maxConnsPerIP int
	websocketsPerIP         int
	credentialConcurrency   int
	eventRetention          time.Duration
	streamRecheck           time.Duration
	replicaHeartbeat        time.Duration
	metrics                 metricsOptions
	rates                   rateOptions
	logFormat               string
	logLevel                slog.Level
}

// rateOptions are each credential's budgets (requests per second, burst)
// for every API request, restarts and metric ingestion, across the whole
// deployment (each of N live replicas holds 1/N); a rate of 0 turns that
// class's limit off.
type rateOptions struct {
	api, restart, ingest                float64
	apiBurst, restartBurst, ingestBurst int
}

func (r rateOptions) limits() map[ratelimit.Class]ratelimit.Limit {
	return map[ratelimit.Class]ratelimit.Limit{
		ratelimit.API:     {Rate: r.api, Burst: r.apiBurst},
		ratelimit.Restart: {Rate: r.restart, Burst: r.restartBurst},
		ratelimit.Ingest:  {Rate: r.ingest, Burst: r.ingestBurst},
	}
}

// metricsOptions say where pod metrics are read and how to reach that source.
type metricsOptions struct {
	source, mapping, bearerToken, basicAuth, caFile string
	timeout                                         time.Duration
}

func parseFlags(args []string) (options, error) {
	fs := flag.NewFlagSet("gpugraph", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // run says what was wrong, and --help goes to stdout
	fs.Usage = func() {}
	var o options
	fs.StringVar(&o.logFormat, "log-format", envOr("GPUGRAPH_LOG_FORMAT", "auto"),
		"auto (text when stderr is a terminal, JSON otherwise), text or json (env GPUGRAPH_LOG_FORMAT)")
	logLevel := fs.String("log-level", envOr("GPUGRAPH_LOG_LEVEL", "info"),
		"debug, info, warn or error: the least severe log line written; debug adds the demo agents' own lines (env GPUGRAPH_LOG_LEVEL)")
	fs.StringVar(&o.addr, "addr", envOr("ADDR", ":8080"), "listen address (env ADDR)")
	fs.StringVar(&o.databaseURL, "database-url", os.Getenv("DATABASE_URL"),
		"postgres://… or sqlite:PATH; unset means SQLite in "+store.DefaultSQLitePath+" (env DATABASE_URL)")
	fs.StringVar(&o.fixtures, "fixtures", os.Getenv("GPUGRAPH_FIXTURES"),
		"fixture file to load at start, replacing rows with the same ids (env GPUGRAPH_FIXTURES)")
	fs.BoolVar(&o.demo, "demo", true, "load the built-in demo data set when the database is empty "+
		"(default on only for SQLite; a PostgreSQL database loads it only when --demo is given, since its keys are public)")
	fs.StringVar(&o.tokenSigningKey, "token-signing-key", os.Getenv("GPUGRAPH_TOKEN_SIGNING_KEY"),
		"key (at least 32 bytes) signing the access tokens of POST /api/v1/token; unset: one is made and kept in the database, shared by every replica, and rotated with gpugraph signing-key rotate (env GPUGRAPH_TOKEN_SIGNING_KEY)")
	fs.StringVar(&o.tokenSigningKeyPrevious, "token-signing-key-previous", os.Getenv("GPUGRAPH_TOKEN_SIGNING_KEY_PREVIOUS"),
		"the --token-signing-key a new one replaced: tokens it signed still verify until they expire, so replicas restarted one by one agree (env GPUGRAPH_TOKEN_SIGNING_KEY_PREVIOUS)")
	fs.BoolVar(&o.introspection, "introspection", true, "allow GraphQL introspection (the playground needs it)")
	fs.DurationVar(&o.heartbeatGrace, "heartbeat-grace", 30*time.Second,
		"how long a reporting node may miss heartbeats before it goes offline")
	fs.DurationVar(&o.sweepInterval, "sweep-interval", 5*time.Second, "how often the heartbeat sweep runs")
	fs.DurationVar(&o.pendingTimeout, "pending-timeout", 0,
		"how long a created VM or pod may stay pending (queued) before the scheduler fails it; 0 waits for ever")
	fs.IntVar(&o.maxPendingPerOrg, "max-pending-per-org", compute.DefaultMaxPending,
		"the most VMs and pods one organization may have pending (queued); a create that would queue one more answers 409 PENDING_LIMIT_EXCEEDED")
	fs.Int64Var(&o.spendLimitCentsPerHour, "spend-limit-cents-per-hour", compute.DefaultSpendLimitCentsPerHour,
		"the default spend limit of a prepaid organization, in cents per hour across everything it runs (0: none); a create or restart that would pass it answers 402 SPEND_LIMIT_EXCEEDED")
	fs.DurationVar(&o.schedulerInterval, "scheduler-interval", scheduler.DefaultInterval,
		"how often the scheduler tries the pending queue besides whenever capacity may have freed")
	fs.DurationVar(&o.meteringInterval, "metering-interval", metering.DefaultInterval,
		"how often the metering pass closes the workloads' usage into records and prepaid organizations' ledgers")
	fs.DurationVar(&o.provisionTimeout, "provision-timeout", sweep.DefaultProvisionTimeout,
		"how long a VM or pod may stay deploying before it fails (no node agent reported it running)")
	fs.DurationVar(&o.teardownGrace, "teardown-grace", sweep.DefaultTeardownGrace,
		"how long a stopped VM or pod on a node that is not online keeps its GPUs, host share and address waiting for the node to report it torn down (tearingDown) before they are freed")
	fs.DurationVar(&o.shutdownTimeout, "shutdown-timeout", 15*time.Second, "how long in-flight requests may finish at shutdown")
	fs.DurationVar(&o.readTimeout, "read-timeout", 60*time.Second,
		"how long a client may take to send a whole request, headers and body (a body trickled byte by byte is cut there)")
	fs.DurationVar(&o.readHeaderTimeout, "read-header-timeout", 10*time.Second,
		"how long a client may take to send a request's headers (a connection trickling them is closed there)")
	fs.DurationVar(&o.writeTimeout, "write-timeout", 90*time.Second,
		"how long a request may take to be answered, writing included (the 30 s request timeout plus the answer); subscription streams are not cut by it")
	fs.DurationVar(&o.bodyTimeout, "body-timeout", httpapi.DefaultBodyTimeout,
		"how long a request's body may take to arrive once its headers are in (408 after); it is read before the request takes a slot of the server, and never longer than --read-timeout")
	fs.IntVar(&o.maxConns, "max-connections", 10000,
		"connections held open at once, 0 for no cap; one more is closed as it is accepted")
	fs.IntVar(&o.maxConnsPerIP, "max-connections-per-address", 512,
		"connections held open at once from one client address, 0 for no cap (behind a proxy every client has the proxy's address: raise it or set 0)")
	fs.IntVar(&o.websocketsPerIP, "websockets-per-address", 64,
		"WebSockets open at once from one client address, 0 for no cap (behind a proxy every client has the proxy's address: raise it or set 0)")
	fs.IntVar(&o.credentialConcurrency, "credential-concurrency", httpapi.DefaultCredentialConcurrency(),
		"API requests one credential may have in flight at once (more wait their turn); by default half the cores, so one key's burst leaves the other half to every other tenant")
	fs.StringVar(&o.metrics.source, "metrics-source", envOr("GPUGRAPH_METRICS_SOURCE", "store"),
		"where pod metrics are read: store, or prometheus:<base URL> of any Prometheus HTTP API (env GPUGRAPH_METRICS_SOURCE)")
	fs.StringVar(&o.metrics.mapping, "metrics-mapping", os.Getenv("GPUGRAPH_METRICS_MAPPING"),
		"JSON file overriding the metric type → PromQL mapping (env GPUGRAPH_METRICS_MAPPING)")
	fs.StringVar(&o.metrics.bearerToken, "metrics-bearer-token", os.Getenv("GPUGRAPH_METRICS_BEARER_TOKEN"),
		"bearer token for the Prometheus source (env GPUGRAPH_METRICS_BEARER_TOKEN)")
	fs.StringVar(&o.metrics.basicAuth, "metrics-basic-auth", os.Getenv("GPUGRAPH_METRICS_BASIC_AUTH"),
		"user:password for the Prometheus source (env GPUGRAPH_METRICS_BASIC_AUTH)")
	fs.StringVar(&o.metrics.caFile, "metrics-ca-file", os.Getenv("GPUGRAPH_METRICS_CA_FILE"),
		"PEM CA bundle trusted for an https Prometheus source (env GPUGRAPH_METRICS_CA_FILE)")
	fs.DurationVar(&o.metrics.timeout, "metrics-timeout", envDuration("GPUGRAPH_METRICS_TIMEOUT", promsource.DefaultTimeout),
		"bound on each request to the Prometheus source (env GPUGRAPH_METRICS_TIMEOUT)")
	credsRequired, credsErr := envBool("GPUGRAPH_NODE_CREDENTIALS_REQUIRED", true)
	fs.BoolVar(&o.nodeCredentialsRequired, "node-credentials-required", credsRequired,
		"accept agent reports only with a node credential; false is the legacy mode, which also accepts any organization's nodes.report API key for nodes without one (env GPUGRAPH_NODE_CREDENTIALS_REQUIRED)")
	fs.DurationVar(&o.eventRetention, "event-retention", live.DefaultEventRetention,
		"how long the event log keeps events: how far back a subscription may resume with after (0 keeps them forever)")
	fs.DurationVar(&o.streamRecheck, "stream-recheck", live.DefaultRecheck,
		"how often open subscriptions check their API key and organization again, besides when a change is notified")
	fs.Float64Var(&o.rates.api, "rate-limit", envFloat("GPUGRAPH_RATE_LIMIT", 50),
		"API requests per second per credential across all replicas, 0 for no limit (env GPUGRAPH_RATE_LIMIT)")
	fs.IntVar(&o.rates.apiBurst, "rate-burst", envInt("GPUGRAPH_RATE_BURST", 100),
		"API requests per credential at once above the rate, across all replicas (env GPUGRAPH_RATE_BURST)")
	fs.Float64Var(&o.rates.restart, "restart-rate-limit", envFloat("GPUGRAPH_RESTART_RATE_LIMIT", 1),
		"restarts per second per credential across all replicas, REST and restartVm alike, 0 for no limit (env GPUGRAPH_RESTART_RATE_LIMIT)")
	fs.IntVar(&o.rates.restartBurst, "restart-burst", envInt("GPUGRAPH_RESTART_BURST", 10),
		"restarts per credential at once above the rate, across all replicas (env GPUGRAPH_RESTART_BURST)")
	fs.Float64Var(&o.rates.ingest, "ingest-rate-limit", envFloat("GPUGRAPH_INGEST_RATE_LIMIT", 5),
		"metric sample batches per second per credential across all replicas, 0 for no limit (env GPUGRAPH_INGEST_RATE_LIMIT)")
	fs.IntVar(&o.rates.ingestBurst, "ingest-burst", envInt("GPUGRAPH_INGEST_BURST", 10),
		"metric sample batches per credential at once above the rate, across all replicas (env GPUGRAPH_INGEST_BURST)")
	fs.DurationVar(&o.replicaHeartbeat, "replica-heartbeat", replicas.DefaultInterval,
		"how often this process announces itself in the database and counts the live replicas, each of which holds 1/N of every rate limit (one missing for 3 beats stops counting)")
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		serverHelp(helpOutput, fs)
		return o, err
	} else if err != nil {
		return o, fmt.Errorf("%w (gpugraph --help lists the flags and commands)", err)
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unknown command %q: the commands are %s (gpugraph --help says more)", fs.Arg(0), strings.Join(nounList(), ", "))
	}
	switch o.logFormat {
	case "auto", "text", "json":
	default:
		return o, fmt.Errorf("--log-format %q: want auto, text or json", o.logFormat)
	}
	if err := o.logLevel.UnmarshalText([]byte(*logLevel)); err != nil {
		return o, fmt.Errorf("--log-level %q: want debug, info, warn or error", *logLevel)
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	o.demoExplicit = given["demo"]
	// A security setting that does not parse must not fall back to either
	// mode silently; the flag, when given, overrides it.
	if credsErr != nil && !given["node-credentials-required"] {
		return o, credsErr
	}
	if store.IsPostgres(o.databaseURL) && !o.demoExplicit {
		o.demo = false
	}
	for name, key := range map[string]string{"token-signing-key": o.tokenSigningKey, "token-signing-key-previous": o.tokenSigningKeyPrevious} {
		if n := len(key); n > 0 && n < auth.MinSigningKeyLen {
			return o, fmt.Errorf("--%s has %d bytes; it needs at least %d", name, n, auth.MinSigningKeyLen)
		}
	}
	if o.tokenSigningKeyPrevious != "" && o.tokenSigningKey == "" {
		return o, errors.New("--token-signing-key-previous needs --token-signing-key: the stored keys rotate with gpugraph signing-key rotate")
	}
	if o.replicaHeartbeat <= 0 {
		return o, fmt.Errorf("--replica-heartbeat %v: must be positive", o.replicaHeartbeat)
	}
	if o.streamRecheck <= 0 {
		return o, fmt.Errorf("--stream-recheck %v: must be positive", o.streamRecheck)
	}
	for _, r := range []float64{o.rates.api, o.rates.restart, o.rates.ingest} {
		if r < 0 {
			return o, fmt.Errorf("rate limits must be 0 (off) or positive, not %v", r)
		}
	}
	if o.eventRetention < 0 {
		return o, fmt.Errorf("--event-retention %v: must be 0 (keep forever) or positive", o.eventRetention)
	}
	if o.pendingTimeout < 0 {
		return o, fmt.Errorf("--pending-timeout %v: must be 0 (none) or positive", o.pendingTimeout)
	}
	if o.maxPendingPerOrg <= 0 {
		return o, fmt.Errorf("--max-pending-per-org %d: must be positive", o.maxPendingPerOrg)
	}
	if o.spendLimitCentsPerHour < 0 {
		return o, fmt.Errorf("--spend-limit-cents-per-hour %d: must be 0 (none) or positive", o.spendLimitCentsPerHour)
	}
	if o.schedulerInterval <= 0 {
		return o, fmt.Errorf("--scheduler-interval %v: must be positive", o.schedulerInterval)
	}
	if o.meteringInterval <= 0 {
		return o, fmt.Errorf("--metering-interval %v: must be positive", o.meteringInterval)
	}
	if o.provisionTimeout <= 0 {
		return o, fmt.Errorf("--provision-timeout %v: must be positive", o.provisionTimeout)
	}
	if o.teardownGrace <= 0 {
		return o, fmt.Errorf("--teardown-grace %v: must be positive", o.teardownGrace)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"--read-timeout", o.readTimeout}, {"--read-header-timeout", o.readHeaderTimeout},
		{"--write-timeout", o.writeTimeout}, {"--body-timeout", o.bodyTimeout}} {
		if d.v <= 0 {
			return o, fmt.Errorf("%s %v: must be positive", d.name, d.v)
		}
	}
	if o.maxConns < 0 || o.maxConnsPerIP < 0 || o.websocketsPerIP < 0 {
		return o, errors.New("--max-connections, --max-connections-per-address and --websockets-per-address must be 0 (no cap) or positive")
	}
	if o.websocketsPerIP == 0 {
		o.websocketsPerIP = -1 // httpapi.Config: no cap
	}
	if o.credentialConcurrency < 1 {
		return o, fmt.Errorf("--credential-concurrency %d: must be at least 1", o.credentialConcurrency)
	}
	return o, nil
}

// envBool reads a boolean environment variable: def when unset, an error
// naming it when it is not a boolean.
func envBool(key string, def bool) (bool, error) {
	v, ok := os.LookupEnv(key)
	if !ok || v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return def, fmt.Errorf("%s=%q: want true or false", key, v)
	}
	return b, nil
}

func envFloat(key string, def float64) float64 {
	if f, err := strconv.ParseFloat(os.Getenv(key), 64); err == nil {
		return f
	}
	return def
}

func envInt(key string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(key)); err == nil {
		return n
	}
	return def
}

func envDuration(key string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(key)); err == nil {
		return d
	}
	return def
}

// metricsSource builds the pod metrics source the flags name; nil is the store.
func metricsSource(o metricsOptions) (podmetrics.Source, error) {
	if o.source == "" || o.source == "store" {
		if o.mapping != "" {
			return nil, errors.New("--metrics-mapping needs --metrics-source prometheus:<base URL>")
		}
		return nil, nil
	}
	base, ok := strings.CutPrefix(o.source, "prometheus:")
	if !ok {
		return nil, fmt.Errorf("--metrics-source must be store or prometheus:<base URL>, not %q", strings.SplitN(o.source, ":", 2)[0])
	}
	m, err := promsource.LoadMapping(o.mapping)
	if err != nil {
		return nil, err
	}
	cfg := promsource.Config{BaseURL: base, BearerToken: o.bearerToken, CAFile: o.caFile, Timeout: o.timeout, Mapping: m}
	if o.basicAuth != "" {
		user, pass, ok := strings.Cut(o.basicAuth, ":")
		if !ok {
			return nil, errors.New("--metrics-basic-auth must be user:password")
		}
		cfg.BasicUser, cfg.BasicPassword = user, pass
	}
	src, err := promsource.New(cfg)
	if err != nil {
		return nil, err
	}
	return src, nil
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func run(ctx context.Context, args []string) error {
	if len(args) > 0 && args[0] == "help" { // gpugraph help [COMMAND [VERB]]
		if len(args) == 1 {
			args = []string{"--help"}
		} else if adminNouns[args[1]] {
			return admin(ctx, append(args[1:min(len(args), 3)], "--help"), helpOutput, os.Stderr)
		} else {
			return fmt.Errorf("unknown command %q: the commands are %s (gpugraph --help says more)", args[1], strings.Join(nounList(), ", "))
		}
	}
	if len(args) > 0 && adminNouns[args[0]] {
		return admin(ctx, args, os.Stdout, os.Stderr)
	}
	o, err := parseFlags(args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	slog.SetDefault(slog.New(reqid.LogHandler(logHandler(logOutput, o.logFormat, o.logLevel))))
	setGC()

	metricsSrc, err := metricsSource(o.metrics)
	if err != nil {
		return err
	}
	st, err := store.Open(o.databaseURL)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		return err
	}
	if !o.nodeCredentialsRequired {
		slog.Warn("legacy mode (--node-credentials-required=false): agent reports made with any organization's nodes.report API key are accepted " +
			"for every node without a node credential, so such a key can report any of them (fail its GPUs, stop its workloads, change its capacity) " +
			"or register new ones; enroll the nodes (POST /v1/admin/nodes/enroll) and run their agents with --bootstrap-token")
	}
	if o.demo && st.Dialect == store.Postgres {
		slog.Warn("--demo on PostgreSQL: the demo data set's API keys are public (they are in the source); anyone who reaches this server can use them")
	}
	if err := loadData(ctx, st, o); err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	// Every handler's context derives from base: cancelling it at the end
	// of the shutdown budget aborts their database statements, so the
	// process never waits on them past --shutdown-timeout.
	base, cancelBase := context.WithCancel(context.Background())
	defer cancelBase()
	tokens, err := auth.NewTokens(st, []byte(o.tokenSigningKey), []byte(o.tokenSigningKeyPrevious))
	if err != nil {
		return err
	}
	feed := live.New(st, live.Limits{Recheck: o.streamRecheck})
	// This process announces itself before it serves, so its first
	// requests are already held to its share of the rate limits; the
	// others count it at their next beat.
	heartbeat := replicas.New(st, o.replicaHeartbeat)
	if err := heartbeat.Beat(ctx); err != nil {
		return fmt.Errorf("replica heartbeat: %w", err)
	}
	p := compose(st, o, metricsSrc, tokens, feed, heartbeat)
	srv := &http.Server{
		Addr:    o.addr,
		Handler: httpapi.New(p.http),
		// Headers within --read-header-timeout (slowloris), at most
		// maxHeaderBytes of them (431 past that).
		ReadHeaderTimeout: o.readHeaderTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		// A whole request (headers and body) within --read-timeout: the
		// backstop of paths that read no body ahead. The API routes read
		// theirs under --body-timeout, then lift the read deadline, so that
		// their own request timeout (and a stream's life) is what bounds
		// them from there.
		ReadTimeout:  o.readTimeout,
		WriteTimeout: o.writeTimeout, // streams lift it: an SSE stream would fail its first write past it
		// Longer than the 60 s idle timeout of the common load balancers,
		// which must close an idle connection before the server does (or
		// one request in a race is lost).
		IdleTimeout: 120 * time.Second,
		BaseContext: func(net.Listener) context.Context { return base },
	}
	tcp, err := net.Listen("tcp", o.addr)
	if err != nil {
		return err
	}
	ln := connlimit.New(tcp, o.maxConns, o.maxConnsPerIP)
	// The background jobs: every replica runs them, the database is their
	// only state.
	go p.sweep.Run(ctx)
	go p.scheduler.Run(ctx)
	go p.retention.Run(ctx)
	go p.metering.Run(ctx)
	go p.podCounts.Run(ctx)
	go p.fleetChanges.Run(ctx)
	// At the stop signal the heartbeat deletes this process's row (the
	// listener closes at once, so the others may take its share), and the
	// process waits for that before it closes the store (however run
	// returns: stop ends ctx).
	beating := make(chan struct{})
	go func() { heartbeat.Run(ctx); close(beating) }()
	defer func() { stop(); <-beating }()
	n, _ := heartbeat.Live()
	slog.Info("listening", "addr", ln.Addr().String(), "engine", string(st.Dialect), "metrics", metricsName(metricsSrc),
		"replica", heartbeat.ID(), "replicas", n)

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	stopAgents, err := startDemoAgents(ctx, st, p.services.Credentials, o, ln.Addr())
	if err != nil && ctx.Err() == nil { // a stop signal during start is no failure
		return err
	}
	defer stopAgents()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown(srv, feed, cancelBase, o.shutdownTimeout)
	return nil
}

// process is what one server process builds over its store, each once:
// the services (services.New) that the HTTP layer, the background jobs
// and the command line are all handed — one compute.Service among them,
// which the scheduler places the queue with and the faces create, stop and
// restart with — the loaders factory of GraphQL's requests, and the jobs.
type process struct {
	services *services.Services
	// http is the HTTP layer's configuration, the services and loaders in it.
	http      httpapi.Config
	sweep     *sweep.Runner
	scheduler *scheduler.Runner
	retention *live.Retention
	metering  *metering.Runner
	podCounts *pods.CountCompaction
	// fleetChanges prunes the changes every replica's copy of the fleet
	// has read.
	fleetChanges *compute.ChangePruning
}

// compose is the composition root of the server: it builds the process's
// services over st (services.New, as the command line does) with what the
// flags o chose of them and what run made for them (the metrics source, nil
// for the store; the token signer; the subscriptions' feed, which run
// shuts down), and hands them to the HTTP layer (with the replica
// heartbeat its rate limits divide by) and the jobs.
func compose(st *store.Store, o options, metrics podmetrics.Source, tokens *auth.Tokens, feed *live.Feed, heartbeat *replicas.Heartbeat) *process {
	svc := services.New(st, services.Config{Metrics: metrics, Tokens: tokens, Live: feed,
		NodeReportKeys: !o.nodeCredentialsRequired, MaxPendingPerOrg: o.maxPendingPerOrg,
		SpendLimitCentsPerHour: o.spendLimitCentsPerHour})
	return &process{
		services: svc,
		http: httpapi.Config{Services: svc, Loaders: loaders.NewFactory(st, svc.Metering, 0), Database: st,
			DisableIntrospection: !o.introspection, RateLimits: o.rates.limits(), Replicas: heartbeat,
			BodyTimeout: min(o.bodyTimeout, o.readTimeout), WebSocketsPerAddress: o.websocketsPerIP,
			CredentialConcurrency: o.credentialConcurrency},
		sweep: sweep.NewRunner(sweep.New(st), sweep.Options{Grace: o.heartbeatGrace, Interval: o.sweepInterval,
			ProvisionTimeout: o.provisionTimeout, TeardownGrace: o.teardownGrace}),
		scheduler: scheduler.NewRunner(scheduler.New(st, svc.Compute), scheduler.Options{Interval: o.schedulerInterval,
			PendingTimeout: o.pendingTimeout}),
		retention:    live.NewRetention(st, o.eventRetention, 10*time.Minute),
		metering:     metering.NewRunner(svc.Metering, o.meteringInterval),
		podCounts:    pods.NewCountCompaction(st, 10*time.Second),
		fleetChanges: compute.NewChangePruning(st, 10*time.Second),
	}
}

// shutdown stops accepting at once (Shutdown closes the listener first, so
// a new connection is refused), lets in-flight requests finish for most of
// timeout, then cancels their contexts (their statements abort) and closes
// every connection, so the whole takes at most timeout plus a few
// milliseconds.
func shutdown(srv *http.Server, feed *live.Feed, cancelBase context.CancelFunc, timeout time.Duration) {
	start := time.Now()
	slog.Info("shutting down: finishing in-flight requests", "timeout", timeout.String())
	margin := min(timeout/10, 500*time.Millisecond)
	sctx, cancel := context.WithTimeout(context.Background(), timeout-margin)
	defer cancel()
	// Streams are hijacked connections Shutdown does not wait for: they
	// close first, with 1001 "going away", so clients resume elsewhere.
	feed.Shutdown()
	if err := srv.Shutdown(sctx); err != nil {
		slog.Warn("shutdown: requests still in flight were cut", "err", err)
		cancelBase()
		_ = srv.Close()
	}
	slog.Info("shut down", "took", time.Since(start).String())
}

func metricsName(src podmetrics.Source) string {
	if src == nil {
		return podmetrics.StoreSource{}.Name()
	}
	return src.Name()
}

// startDemoAgents runs the demo's in-process node agents (demo/agents)
// when --demo is on and the database holds the demo data set, reporting to
// this process's own listener over loopback, makes the demo's admin key,
// then prints the banner, last of the start's lines; the returned func
// stops the agents and waits until they have.
func startDemoAgents(ctx context.Context, st *store.Store, creds *credentials.Service, o options, addr net.Addr) (func(), error) {
	if !o.demo {
		return func() {}, nil
	}
	loaded, err := agents.Loaded(ctx, st)
	if err != nil || !loaded {
		return func() {}, err
	}
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return func() {}, fmt.Errorf("demo agents: listener address %v is not TCP", addr)
	}
	adminKey, err := demoAdminKey(ctx, creds)
	if err != nil {
		return func() {}, fmt.Errorf("demo admin key: %w", err)
	}
	url := fmt.Sprintf("http://%s", net.JoinHostPort(loopback(tcp.IP), fmt.Sprint(tcp.Port)))
	actx, cancel := context.WithCancel(ctx)
	wait, err := agents.Start(actx, st, url, agents.Options{})
	if err != nil {
		cancel()
		return func() {}, fmt.Errorf("demo agents: %w", err)
	}
	// The demo's metrics keep coming relative to now, so "the last hour"
	// has data however long ago the demo was loaded.
	waitSamples := agents.PushSamples(actx, url, agents.SampleOptions{})
	slog.Info("demo node agents and metric samples running in-process (their own lines at --log-level=debug)", "server", url)
	printDemoBanner(banner, addr, o.nodeCredentialsRequired, adminKey)
	return func() { cancel(); wait(); waitSamples() }, nil
}

// demoAdminName names the demo's admin key among the keys of its first
// organization.
const demoAdminName = "demo-admin"

// demoAdminKey makes the demo's admin key, with every permission (admin
// and nodes.admin: every organization's credentials, the fleet), and
// revokes the one an earlier start made: unlike the demo's other keys it
// is random, so only whoever reads this start's banner holds it. Only a
// database holding the demo data set gets one.
func demoAdminKey(ctx context.Context, svc *credentials.Service) (string, error) {
	caller := auth.SystemCaller()
	org := demo.Keys()[0].OrganizationID
	keys, err := svc.ListKeys(ctx, caller, org)
	if err != nil {
		return "", err
	}
	for _, k := range keys {
		if k.Name == demoAdminName && k.RevokedAt == nil {
			if _, err := svc.RevokeKey(ctx, caller, k.ID); err != nil {
				return "", err
			}
		}
	}
	k, err := svc.CreateKey(ctx, caller, credentials.Spec{OrganizationID: org, Name: demoAdminName, Permissions: auth.Permissions})
	if err != nil {
		return "", err
	}
	return k.Secret, nil
}

// loopback is the address to reach a listener bound to ip from this host.
func loopback(ip net.IP) string {
	if ip == nil || ip.IsUnspecified() {
		return "127.0.0.1" // Go's wildcard listeners take IPv4 too
	}
	return ip.String()
}

// loadData loads the fixture file, then the demo when the database is empty.
func loadData(ctx context.Context, st *store.Store, o options) error {
	if o.fixtures != "" {
		b, err := os.ReadFile(o.fixtures)
		if err != nil {
			return err
		}
		stats, err := dataset.LoadFile(ctx, st, b)
		if err != nil {
			return err
		}
		slog.Info("fixtures loaded", "file", o.fixtures, "nodes", stats.Nodes, "gpus", stats.GPUs,
			"vms", stats.VMs, "pods", stats.Pods, "samples", stats.Samples)
		// A fixture is often the whole fleet: plan the first requests with
		// statistics of it, not of an empty database (PostgreSQL without
		// autovacuum, or before its next round, has none).
		if err := st.Analyze(ctx); err != nil {
			return err
		}
	}
	if !o.demo {
		return nil
	}
	empty, err := st.Empty(ctx)
	if err != nil || !empty {
		return err
	}
	b, err := demo.JSON(time.Now())
	if err != nil {
		return err
	}
	if _, err := dataset.LoadFile(ctx, st, b); err != nil {
		return fmt.Errorf("demo data: %w", err)
	}
	slog.Warn("loaded the demo data set: its API keys are public (they are in the source); never expose this server", "engine", string(st.Dialect))
	fmt.Fprintln(banner, "Loaded the demo data set.")
	return nil
}

// banner is where the start banner goes, logOutput where the log does,
// helpOutput where --help does; variables so tests can read them.
var (
	banner     io.Writer = os.Stderr
	logOutput  io.Writer = os.Stderr
	helpOutput io.Writer = os.Stdout
)

// logHandler writes the log to w as format says: auto is slog's text
// (key=value lines) when w is a terminal, someone reading, and JSON
// otherwise, for a collector.
func logHandler(w io.Writer, format string, level slog.Level) slog.Handler {
	opts := &slog.HandlerOptions{Level: level}
	if format == "text" || format == "auto" && isTerminal(w) {
		return slog.NewTextHandler(w, opts)
	}
	return slog.NewJSONHandler(w, opts)
}

// isTerminal reports whether w is a terminal: a character device other
// than the null device.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(fi, null)
}

// nounSummaries say what each command's subcommands administer, for
// gpugraph --help.
var nounSummaries = map[string]string{
	"keys":        "API keys",
	"apps":        "applications: Run:ai client credentials for POST /api/v1/token",
	"orgs":        "organizations",
	"signing-key": "the key signing access tokens",
	"nodes":       "node enrollment: a one-time bootstrap token for a node's agent",
	"clusters":    "Kubernetes cluster connectors: a cluster's credential for its cluster-agent, and its revocation",
}

// nounList is the commands' first words, in the order of adminCmds.
func nounList() []string {
	var out []string
	for _, c := range adminCmds {
		if !slices.Contains(out, c.noun) {
			out = append(out, c.noun)
		}
	}
	return out
}

// serverHelp is gpugraph --help: the commands, then the server's flags.
func serverHelp(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprint(w, `gpugraph serves a GPU cloud's control-plane API (GraphQL, OpenRelay's and Run:ai's REST paths) over one store;
its commands administer that store straight, server running or not.

usage:
  gpugraph [flags]                 serve (the flags below)
  gpugraph COMMAND VERB [flags]    administer the database of --database-url (env DATABASE_URL), as the server does
  gpugraph COMMAND --help          a command's verbs; gpugraph COMMAND VERB --help lists its flags

commands:
`)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, noun := range nounList() {
		var verbs []string
		for _, c := range adminCmds {
			if c.noun == noun {
				verbs = append(verbs, c.verb)
			}
		}
		fmt.Fprintf(tw, "  %s %s\t%s\n", noun, strings.Join(verbs, "|"), nounSummaries[noun])
	}
	_ = tw.Flush()
	fmt.Fprint(w, "\nserver flags:\n")
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

// printDemoBanner tells whoever started the server, at every start on the
// demo's data (not only the one that loaded it), where the console and the
// playground are, which keys to type into them — and that the agent keys (nodes.report)
// report only in legacy mode, since the demo's own agents do not need them
// — this start's admin key, and three commands to try.
func printDemoBanner(w io.Writer, addr net.Addr, credentialsRequired bool, adminKey string) {
	url := "http://" + addr.String() + "/"
	if tcp, ok := addr.(*net.TCPAddr); ok && (tcp.IP == nil || tcp.IP.IsUnspecified()) {
		url = fmt.Sprintf("http://localhost:%d/", tcp.Port)
	}
	host := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/")
	fmt.Fprintf(w, "Console: %sconsole (the fleet, VMs, pods and usage in a browser; type a key below into it)\n", url)
	fmt.Fprintf(w, "Playground: %s (type a key into its API key field). Demo API keys (send as Authorization: Bearer <key>):\n", url)
	for _, k := range demo.Keys() {
		note := ""
		if slices.Contains(k.Permissions, auth.NodesReport) {
			note = " (refused here: this server requires node credentials; only --node-credentials-required=false accepts it)"
			if !credentialsRequired {
				note = " (legacy mode: accepted for nodes without a node credential)"
			}
		}
		fmt.Fprintf(w, "  %-22s %-14s %s%s\n", k.Token, k.Organization, strings.Join(k.Permissions, " "), note)
	}
	fmt.Fprintln(w, "The demo's node agents run in this process and report with node credentials, enrolled at every start.")
	fmt.Fprintf(w, "DEMO ONLY: an admin key with every permission (admin and nodes.admin: every organization's credentials and the fleet), "+
		"made at this start, the previous start's revoked:\n  export GPUGRAPH_ADMIN_KEY=%s\n", adminKey)
	fmt.Fprintf(w, "Try (the demo is described in demo/README.md):\n")
	fmt.Fprintf(w, "  curl -s %s/graphql -H 'Authorization: Bearer acme-operator' -H 'Content-Type: application/json' "+
		"-d '{\"query\":\"{ vms(limit: 3) { vms { name status node { name gpus { index health } } } } }\"}'\n", host)
	fmt.Fprintf(w, "  curl -s -X POST %s/v1/vms/vm-restart-ok-running/restart -H 'Authorization: Bearer acme-operator'\n", host)
	fmt.Fprintf(w, "  curl -s %s/v1/admin/keys -H \"Authorization: Bearer $GPUGRAPH_ADMIN_KEY\"\n", host)
}
