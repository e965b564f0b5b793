// Command benchpeer measures gpugraph side by side with PostGraphile v4 and v5
// over one PostgreSQL database (package bench/peer): it installs each
// release from npm into a cache directory of its own outside the repository
// (v5 with the Node.js release it needs), loads a fleet
// into a new database on TEST_DATABASE_URL's server, starts every server,
// checks that their answers hold the same objects, measures Q1–Q4 and, with -o,
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
	"io"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"

	"gpugraph/bench"
	"gpugraph/bench/peer"
)

// options are what the command line asks for.
type options struct {
	cfg peer.Config
	out string // -o
}

// parseArgs reads the command line (args, without the program's name)
// and the environment (getenv): the measurement's configuration, or
// what was wrong with them.
func parseArgs(args []string, getenv func(string) string, stderr io.Writer) (*options, error) {
	o := &options{cfg: peer.Defaults()}
	fs := flag.NewFlagSet("benchpeer", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.out, "o", "", "write the tables into this markdown file")
	fs.StringVar(&o.cfg.Server, "server", "bin/gpugraph", "the gpugraph binary to measure")
	fs.IntVar(&o.cfg.Runs, "runs", o.cfg.Runs, "latency runs per query and server")
	fs.IntVar(&o.cfg.Rounds, "rounds", o.cfg.Rounds, "requests/s rounds per query, client count and server")
	fs.DurationVar(&o.cfg.RoundTime, "round-time", o.cfg.RoundTime, "length of one requests/s round")
	clients := fs.String("clients", "8,16", "client counts of the requests/s rounds (empty: none)")
	queries := fs.String("queries", "", "comma-separated query names, Q1–Q4 (default: all)")
	peers := fs.String("peers", "v4,v5", "comma-separated PostGraphile releases to measure beside gpugraph: v4, v5")
	fs.IntVar(&o.cfg.Nodes, "nodes", o.cfg.Nodes, "fleet nodes (8 GPUs each)")
	fs.IntVar(&o.cfg.Pods, "pods", o.cfg.Pods, "fleet pods")
	fs.BoolVar(&o.cfg.NoGzip, "no-gzip", false, "clients ask for answers uncompressed (by default they accept gzip, which gpugraph answers with and PostGraphile ignores)")
	quiet := fs.Bool("q", false, "no progress lines on standard error")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	o.cfg.Clients = nil
	for _, c := range strings.Split(*clients, ",") {
		if c = strings.TrimSpace(c); c == "" {
			continue
		}
		n, err := strconv.Atoi(c)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-clients: %q is not a client count", c)
		}
		o.cfg.Clients = append(o.cfg.Clients, n)
	}
	if *queries != "" {
		var known []string
		for _, q := range peer.Queries() {
			known = append(known, q.Name)
		}
		o.cfg.Only = map[string]bool{}
		for _, q := range strings.Split(*queries, ",") {
			name := strings.ToUpper(strings.TrimSpace(q))
			if !slices.Contains(known, name) {
				return nil, fmt.Errorf("-queries: %q is not a query: %s", q, strings.Join(known, ", "))
			}
			o.cfg.Only[name] = true
		}
	}
	o.cfg.Peers = nil
	for _, name := range strings.Split(*peers, ",") {
		name = strings.ToLower(strings.TrimSpace(name))
		i := slices.IndexFunc(peer.Peers(), func(p peer.Peer) bool { return p.Name == name })
		if i < 0 || slices.ContainsFunc(o.cfg.Peers, func(p peer.Peer) bool { return p.Name == name }) {
			return nil, fmt.Errorf("-peers: %q is not a release, or is named twice: v4, v5", name)
		}
		o.cfg.Peers = append(o.cfg.Peers, peer.Peers()[i])
	}
	o.cfg.PostgresURL = getenv("TEST_DATABASE_URL")
	if !*quiet {
		o.cfg.Log = stderr
	}
	return o, nil
}

func main() {
	o, err := parseArgs(os.Args[1:], os.Getenv, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fail("%v", err)
	}
	if o.cfg.PostgresURL == "" {
		fmt.Fprintln(os.Stderr, "benchpeer: skipped: TEST_DATABASE_URL is not set (the peer figure runs on PostgreSQL)")
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	rep, err := peer.Run(ctx, o.cfg)
	if errors.Is(err, peer.ErrNoNPM) {
		fmt.Fprintln(os.Stderr, "benchpeer: skipped:", err)
		return
	}
	if err != nil {
		fail("%v", err)
	}
	var b bytes.Buffer
	rep.Markdown(&b, o.cfg)
	fmt.Print(b.String())
	if o.out != "" {
		if err := bench.WriteSection(o.out, "<!-- peer:begin -->", "<!-- peer:end -->", b.String()); err != nil {
			fail("%v", err)
		}
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "benchpeer: "+format+"\n", args...)
	os.Exit(2)
}
