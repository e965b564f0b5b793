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
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"gpugraph/bench"
	"gpugraph/bench/abuse"
)

// options are what the command line asks for.
type options struct {
	cfg abuse.Config
	out string // -o
}

// parseArgs reads the command line (args, without the program's name)
// and the environment (getenv): the attacks' configuration, or what was
// wrong with them.
func parseArgs(args []string, getenv func(string) string, stderr io.Writer) (*options, error) {
	o := &options{cfg: abuse.Defaults()}
	fs := flag.NewFlagSet("abusereport", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.out, "o", "", "write the tables and the machine into this markdown file")
	fs.StringVar(&o.cfg.Server, "server", "bin/gpugraph", "the gpugraph binary to attack")
	engines := fs.String("engines", "", "comma-separated: sqlite,postgres (default: sqlite, and postgres when TEST_DATABASE_URL is set)")
	only := fs.String("attacks", "", "comma-separated attack numbers to run (default: all)")
	fs.DurationVar(&o.cfg.Box, "box", o.cfg.Box, "longest a measured phase of an attack runs")
	fs.DurationVar(&o.cfg.Baseline, "baseline", o.cfg.Baseline, "how long the victim's baseline is measured, before and after an attack")
	fs.DurationVar(&o.cfg.Window, "window", o.cfg.Window, "how long a flood keeps the attacker's requests in flight")
	quiet := fs.Bool("q", false, "no progress lines on standard error")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	attacks, err := bench.ParseNumbers(*only, len(abuse.Attacks()))
	if err != nil {
		return nil, fmt.Errorf("-attacks: %w", err)
	}
	o.cfg.Only = attacks
	o.cfg.PostgresURL = getenv("TEST_DATABASE_URL")
	if o.cfg.Engines, err = bench.ParseEngines(*engines, o.cfg.PostgresURL); err != nil {
		return nil, fmt.Errorf("-engines: %w", err)
	}
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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	rep, err := abuse.Run(ctx, o.cfg)
	if err != nil {
		fail("%v", err)
	}
	rep.Text(os.Stdout)
	if o.out != "" {
		if err := rep.WriteMarkdown(o.out, o.cfg); err != nil {
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
