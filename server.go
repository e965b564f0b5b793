// Command gpugraph is the control-plane API of a GPU cloud: GraphQL for the
// playground and front-end apps, and the documented REST paths of
// OpenRelay's restart and Run:ai's pods APIs, over one store.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"gpugraph/dataset"
	"gpugraph/demo"
	"gpugraph/httpapi"
	"gpugraph/store"
)

func main() {
	if err := run(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "gpugraph:", err)
		os.Exit(1)
	}
}

type options struct {
	addr, databaseURL, fixtures string
	demo, introspection         bool
	heartbeatGrace              time.Duration
	sweepInterval               time.Duration
	shutdownTimeout             time.Duration
}

func parseFlags(args []string) (options, error) {
	fs := flag.NewFlagSet("gpugraph", flag.ContinueOnError)
	var o options
	fs.StringVar(&o.addr, "addr", envOr("ADDR", ":8080"), "listen address (env ADDR)")
	fs.StringVar(&o.databaseURL, "database-url", os.Getenv("DATABASE_URL"),
		"postgres://… or sqlite:PATH; unset means SQLite in "+store.DefaultSQLitePath+" (env DATABASE_URL)")
	fs.StringVar(&o.fixtures, "fixtures", os.Getenv("GPUGRAPH_FIXTURES"),
		"fixture file to load at start, replacing rows with the same ids (env GPUGRAPH_FIXTURES)")
	fs.BoolVar(&o.demo, "demo", true, "load the built-in demo data set when the database is empty")
	fs.BoolVar(&o.introspection, "introspection", true, "allow GraphQL introspection (the playground needs it)")
	fs.DurationVar(&o.heartbeatGrace, "heartbeat-grace", 30*time.Second,
		"how long a reporting node may miss heartbeats before it goes offline")
	fs.DurationVar(&o.sweepInterval, "sweep-interval", 5*time.Second, "how often the heartbeat sweep runs")
	fs.DurationVar(&o.shutdownTimeout, "shutdown-timeout", 15*time.Second, "how long in-flight requests may finish at shutdown")
	return o, fs.Parse(args)
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func run(ctx context.Context, args []string) error {
	o, err := parseFlags(args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	slog.SetDefault(logger)

	st, err := store.Open(o.databaseURL)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		return err
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
	srv := &http.Server{
		Addr:              o.addr,
		Handler:           httpapi.New(httpapi.Config{Store: st, DisableIntrospection: !o.introspection}),
		ReadHeaderTimeout: 10 * time.Second,
		// A whole request (headers and body, up to the 32 MiB sample batch)
		// within 60 s: a body trickled byte by byte is cut there.
		ReadTimeout:  60 * time.Second,
		WriteTimeout: 90 * time.Second, // the 30 s request timeout plus writing the answer
		IdleTimeout:  120 * time.Second,
		BaseContext:  func(net.Listener) context.Context { return base },
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return err
	}
	go httpapi.RunSweeper(ctx, st, o.heartbeatGrace, o.sweepInterval)
	slog.Info("listening", "addr", ln.Addr().String(), "engine", string(st.Dialect))

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown(srv, cancelBase, o.shutdownTimeout)
	return nil
}

// shutdown stops accepting at once (Shutdown closes the listener first, so
// a new connection is refused), lets in-flight requests finish for most of
// timeout, then cancels their contexts (their statements abort) and closes
// every connection, so the whole takes at most timeout plus a few
// milliseconds.
func shutdown(srv *http.Server, cancelBase context.CancelFunc, timeout time.Duration) {
	start := time.Now()
	slog.Info("shutting down: finishing in-flight requests", "timeout", timeout.String())
	margin := min(timeout/10, 500*time.Millisecond)
	sctx, cancel := context.WithTimeout(context.Background(), timeout-margin)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		slog.Warn("shutdown: requests still in flight were cut", "err", err)
		cancelBase()
		_ = srv.Close()
	}
	slog.Info("shut down", "took", time.Since(start).String())
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
	fmt.Fprintln(os.Stderr, "Loaded the demo data set. Its API keys (send as Authorization: Bearer <key>):")
	for _, k := range demo.Keys() {
		fmt.Fprintf(os.Stderr, "  %-22s %-10s %v\n", k.Token, k.Organization, k.Permissions)
	}
	return nil
}
