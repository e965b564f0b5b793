// Command benchreport measures the seven figures of gpugraph's performance
// issue and the live-updates figure (8) on SQLite, and on PostgreSQL when
// TEST_DATABASE_URL is set: each on a fresh database behind an in-process server on a loopback port. It
// prints the table and, with -o, writes it with the machine into a markdown
// file between the markers <!-- bench:begin --> and <!-- bench:end -->,
// keeping the rest of the file.
//
//	go run ./cmd/benchreport -o BENCHMARKS.md    (what make bench runs)
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"

	"gpugraph/bench"
)

func main() {
	cfg := bench.Defaults()
	out := flag.String("o", "", "write the table and the machine into this markdown file")
	engines := flag.String("engines", "", "comma-separated: sqlite,postgres (default: sqlite, and postgres when TEST_DATABASE_URL is set)")
	flag.IntVar(&cfg.FleetNodes, "fleet-nodes", cfg.FleetNodes, "nodes of the fleet fixture (figures 1, 2, 4, 6, 7)")
	flag.IntVar(&cfg.FleetPods, "fleet-pods", cfg.FleetPods, "pods of the fleet fixture")
	flag.IntVar(&cfg.BigPods, "big-pods", cfg.BigPods, "pods of figure 3 on PostgreSQL")
	flag.IntVar(&cfg.SQLiteBigPods, "sqlite-big-pods", cfg.SQLiteBigPods, "pods of figure 3 on SQLite (0: skip)")
	flag.IntVar(&cfg.Samples, "samples", cfg.Samples, "stored samples of figure 6")
	flag.IntVar(&cfg.RestartNodes, "restart-nodes", cfg.RestartNodes, "nodes of figure 5")
	flag.IntVar(&cfg.LoadRequests, "requests", cfg.LoadRequests, "requests per query of figure 4")
	flag.IntVar(&cfg.LatencyRuns, "runs", cfg.LatencyRuns, "timed runs per latency (the median is reported)")
	flag.DurationVar(&cfg.LoaderWait, "loader-wait", 0, "dataloader batch wait (0: the server's default)")
	flag.IntVar(&cfg.LiveSubscribers, "live-subscribers", cfg.LiveSubscribers, "WebSocket subscribers of figure 8")
	flag.IntVar(&cfg.LiveEvents, "live-events", cfg.LiveEvents, "events committed in figure 8")
	only := flag.String("figures", "", "comma-separated figure numbers to run (default: all eight)")
	flag.StringVar(&cfg.ProfileDir, "profile", "", "write a CPU profile of each figure (but 7) into this directory")
	quiet := flag.Bool("q", false, "no progress lines on standard error")
	flag.Parse()

	figures, err := bench.ParseNumbers(*only, 8)
	if err != nil {
		fail("-figures: %v", err)
	}
	cfg.Figures = figures
	cfg.PostgresURL = os.Getenv("TEST_DATABASE_URL")
	engineList, err := bench.ParseEngines(*engines, cfg.PostgresURL)
	if err != nil {
		fail("%v", err)
	}
	cfg.Engines = engineList
	if !*quiet {
		cfg.Log = os.Stderr
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	start := time.Now()
	machine := bench.Describe(ctx, cfg)
	rep := bench.Run(ctx, cfg)
	took := time.Since(start)

	fmt.Println()
	rep.Text(os.Stdout)
	fmt.Printf("\n%s in %s\n", strings.Join(machine.Lines(), "; "), took.Round(time.Second))
	if *out != "" {
		if err := writeMarkdown(*out, rep, machine, cfg, took); err != nil {
			fail("%v", err)
		}
	}
}

const begin, end = "<!-- bench:begin -->", "<!-- bench:end -->"

// writeMarkdown replaces the generated part of path (between the markers),
// or writes a new file with only that part.
func writeMarkdown(path string, rep *bench.Report, m bench.Machine, cfg bench.Config, took time.Duration) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "Measured %s with `make bench` (`go run ./cmd/benchreport -o BENCHMARKS.md`), %s in all; loader wait %s.\n\n",
		time.Now().UTC().Format("2006-01-02"), took.Round(time.Second), loaderWait(cfg))
	for _, l := range m.Lines() {
		b.WriteString("- " + l + "\n")
	}
	b.WriteString("\n")
	rep.Markdown(&b)
	return bench.WriteSection(path, begin, end, b.String())
}

func loaderWait(cfg bench.Config) string {
	if cfg.LoaderWait == 0 {
		return "the server's default"
	}
	return cfg.LoaderWait.String()
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "benchreport: "+format+"\n", args...)
	os.Exit(2)
}
