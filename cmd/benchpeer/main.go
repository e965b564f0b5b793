// Command benchpeer measures gpugraph side by side with PostGraphile v4 over
// one PostgreSQL database (package bench/peer): it installs PostGraphile
// from npm into a cache directory outside the repository, loads a fleet
// into a new database on TEST_DATABASE_URL's server, starts both servers,
// checks their answers hold the same objects, measures Q1–Q4 and, with -o,
// writes the tables between <!-- peer:begin --> and <!-- peer:end -->.
// Without npm it says so and exits 0: the figure is skipped, not failed.
//
//	go build -o bin/gpugraph . && go run ./cmd/benchpeer -server bin/gpugraph -o BENCHMARKS.md
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"

	"gpugraph/bench"
	"gpugraph/bench/peer"
)

func main() {
	cfg := peer.Defaults()
	out := flag.String("o", "", "write the tables into this markdown file")
	flag.StringVar(&cfg.Server, "server", "bin/gpugraph", "the gpugraph binary to measure")
	flag.IntVar(&cfg.Runs, "runs", cfg.Runs, "latency runs per query and server")
	flag.IntVar(&cfg.Rounds, "rounds", cfg.Rounds, "requests/s rounds per query, client count and server")
	flag.DurationVar(&cfg.RoundTime, "round-time", cfg.RoundTime, "length of one requests/s round")
	clients := flag.String("clients", "8,16", "client counts of the requests/s rounds (empty: none)")
	queries := flag.String("queries", "", "comma-separated query names, Q1–Q4 (default: all)")
	flag.IntVar(&cfg.Nodes, "nodes", cfg.Nodes, "fleet nodes (8 GPUs each)")
	flag.IntVar(&cfg.Pods, "pods", cfg.Pods, "fleet pods")
	quiet := flag.Bool("q", false, "no progress lines on standard error")
	flag.Parse()

	cfg.Clients = nil
	for _, c := range strings.Split(*clients, ",") {
		if c = strings.TrimSpace(c); c == "" {
			continue
		}
		n, err := strconv.Atoi(c)
		if err != nil || n < 1 {
			fail("-clients: %q is not a client count", c)
		}
		cfg.Clients = append(cfg.Clients, n)
	}
	if *queries != "" {
		cfg.Only = map[string]bool{}
		for _, q := range strings.Split(*queries, ",") {
			cfg.Only[strings.ToUpper(strings.TrimSpace(q))] = true
		}
	}
	cfg.PostgresURL = os.Getenv("TEST_DATABASE_URL")
	if cfg.PostgresURL == "" {
		fmt.Fprintln(os.Stderr, "benchpeer: skipped: TEST_DATABASE_URL is not set (the peer figure runs on PostgreSQL)")
		return
	}
	if !*quiet {
		cfg.Log = os.Stderr
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	rep, err := peer.Run(ctx, cfg)
	if errors.Is(err, peer.ErrNoNPM) {
		fmt.Fprintln(os.Stderr, "benchpeer: skipped:", err)
		return
	}
	if err != nil {
		fail("%v", err)
	}
	var b bytes.Buffer
	rep.Markdown(&b, cfg)
	fmt.Print(b.String())
	if *out != "" {
		if err := bench.WriteSection(*out, "<!-- peer:begin -->", "<!-- peer:end -->", b.String()); err != nil {
			fail("%v", err)
		}
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "benchpeer: "+format+"\n", args...)
	os.Exit(2)
}
