// Command abusereport runs the attacks of the hostile-tenants issue
// (package bench/abuse) against the server binary, started as processes
// of their own: on SQLite, and on two replicas of one PostgreSQL database
// when TEST_DATABASE_URL is set. It prints one table per engine of each
// attack's server CPU and memory per request, its answers, the victim
// tenant's latency where the attack is a noisy neighbour, and PASS or
// FAIL against the bounds; with -o it writes the tables between
// <!-- abuse:begin --> and <!-- abuse:end --> of a markdown file. It exits
// 1 when any result is outside its bounds, 2 when it could not measure.
//
//	make build && go run ./cmd/abusereport -server bin/gpugraph -o BENCHMARKS.md    (what make abuse runs)
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"

	"gpugraph/bench"
	"gpugraph/bench/abuse"
)

func main() {
	cfg := abuse.Defaults()
	out := flag.String("o", "", "write the tables and the machine into this markdown file")
	flag.StringVar(&cfg.Server, "server", "bin/gpugraph", "the gpugraph binary to attack")
	engines := flag.String("engines", "", "comma-separated: sqlite,postgres (default: sqlite, and postgres when TEST_DATABASE_URL is set)")
	only := flag.String("attacks", "", "comma-separated attack numbers to run (default: all)")
	flag.DurationVar(&cfg.Box, "box", cfg.Box, "longest a measured phase of an attack runs")
	flag.DurationVar(&cfg.Baseline, "baseline", cfg.Baseline, "how long the victim's baseline is measured, before and after an attack")
	flag.DurationVar(&cfg.Window, "window", cfg.Window, "how long a flood keeps the attacker's requests in flight")
	quiet := flag.Bool("q", false, "no progress lines on standard error")
	flag.Parse()

	attacks, err := bench.ParseNumbers(*only, len(abuse.Attacks()))
	if err != nil {
		fail("-attacks: %v", err)
	}
	cfg.Only = attacks
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

	rep, err := abuse.Run(ctx, cfg)
	if err != nil {
		fail("%v", err)
	}
	rep.Text(os.Stdout)
	if *out != "" {
		if err := rep.WriteMarkdown(*out, cfg); err != nil {
			fail("%v", err)
		}
	}
	if rep.Failed() > 0 {
		os.Exit(1)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "abusereport: "+format+"\n", args...)
	os.Exit(2)
}
