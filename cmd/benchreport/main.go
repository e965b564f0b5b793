// Command benchreport measures the seven figures of gpugraph's performance
// issue, the live-updates figure (8), create and the queue (9) and the
// cluster connector at scale (10) and the metering pass (11) on SQLite, and on PostgreSQL when
// TEST_DATABASE_URL is set: each on a fresh database behind an in-process
// server on a loopback port (figure 10: the gpugraph and cluster-agent
// binaries as processes, against a real kube-apiserver and etcd). It
// prints the table and, with -o, writes it with the machine into a markdown
// file between the markers <!-- bench:begin --> and <!-- bench:end -->,
// keeping the rest of the file; figure 9 has a section of its own (between
// <!-- bench-queue:begin --> and <!-- bench-queue:end -->), so that
// -figures 9 rewrites it alone and a run without it leaves it as it was;
// so has figure 10 (<!-- bench-cluster:begin --> … end), left as it was
// where kube-apiserver is not built (test/kube/build.sh builds it); so have
// figure 11 (<!-- bench-metering:begin --> … end) and figure 12
// (<!-- bench-heartbeat:begin --> … end).
//
//	go run ./cmd/benchreport -o BENCHMARKS.md    (what make bench runs)
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
	"strings"
	"time"

	"gpugraph/bench"
)

// options are what the command line asks for.
type options struct {
	cfg bench.Config
	out string // -o
}

// parseArgs reads the command line (args, without the program's name)
// and the environment (getenv): the figures' configuration, or what was
// wrong with them.
func parseArgs(args []string, getenv func(string) string, stderr io.Writer) (*options, error) {
	o := &options{cfg: bench.Defaults()}
	cfg := &o.cfg
	fs := flag.NewFlagSet("benchreport", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.out, "o", "", "write the table and the machine into this markdown file")
	engines := fs.String("engines", "", "comma-separated: sqlite,postgres (default: sqlite, and postgres when TEST_DATABASE_URL is set)")
	fs.IntVar(&cfg.FleetNodes, "fleet-nodes", cfg.FleetNodes, "nodes of the fleet fixture (figures 1, 2, 4, 6, 7)")
	fs.IntVar(&cfg.FleetPods, "fleet-pods", cfg.FleetPods, "pods of the fleet fixture")
	fs.IntVar(&cfg.BigPods, "big-pods", cfg.BigPods, "pods of figure 3 on PostgreSQL")
	fs.IntVar(&cfg.SQLiteBigPods, "sqlite-big-pods", cfg.SQLiteBigPods, "pods of figure 3 on SQLite (0: skip)")
	fs.IntVar(&cfg.Samples, "samples", cfg.Samples, "stored samples of figure 6")
	fs.IntVar(&cfg.RestartNodes, "restart-nodes", cfg.RestartNodes, "nodes of figure 5")
	fs.IntVar(&cfg.LoadRequests, "requests", cfg.LoadRequests, "requests per query of figure 4")
	fs.IntVar(&cfg.LatencyRuns, "runs", cfg.LatencyRuns, "timed runs per latency (the median is reported)")
	fs.DurationVar(&cfg.LoaderWait, "loader-wait", 0, "dataloader batch wait (0: the server's default)")
	fs.IntVar(&cfg.LiveSubscribers, "live-subscribers", cfg.LiveSubscribers, "WebSocket subscribers of figure 8")
	fs.IntVar(&cfg.LiveEvents, "live-events", cfg.LiveEvents, "events committed in figure 8")
	fs.IntVar(&cfg.QueuePending, "queue-pending", cfg.QueuePending, "pending VMs of figure 9")
	fs.IntVar(&cfg.QueueSamples, "queue-samples", cfg.QueueSamples, "stops timed until a pending VM is placed (figure 9)")
	fs.IntVar(&cfg.MeteringWorkloads, "metering-workloads", cfg.MeteringWorkloads, "running workloads of figure 11")
	fs.IntVar(&cfg.MeteringOrgs, "metering-orgs", cfg.MeteringOrgs, "organizations of figure 11")
	fs.IntVar(&cfg.ClusterNodes, "cluster-nodes", cfg.ClusterNodes, "Kubernetes nodes of figure 10")
	fs.IntVar(&cfg.ClusterPods, "cluster-pods", cfg.ClusterPods, "Kubernetes pods of figure 10")
	fs.Float64Var(&cfg.ClusterRate, "cluster-rate", cfg.ClusterRate, "pod phase changes a second in figure 10's steady state")
	fs.DurationVar(&cfg.ClusterSteady, "cluster-steady", cfg.ClusterSteady, "how long figure 10's steady state runs")
	fs.IntVar(&cfg.HeartbeatNodes, "heartbeat-nodes", cfg.HeartbeatNodes, "nodes of figure 12")
	fs.IntVar(&cfg.HeartbeatClients, "heartbeat-agents", cfg.HeartbeatClients, "agents heartbeating at once in figure 12")
	fs.IntVar(&cfg.HeartbeatRequests, "heartbeats", cfg.HeartbeatRequests, "heartbeats timed in figure 12")
	fs.StringVar(&cfg.ServerBinary, "server", cfg.ServerBinary, "the gpugraph binary figure 10 runs (make build makes it)")
	fs.StringVar(&cfg.AgentBinary, "cluster-agent", cfg.AgentBinary, "the cluster-agent binary figure 10 runs (make build makes it)")
	only := fs.String("figures", "", "comma-separated figure numbers to run (default: all twelve; 9 alone: create and the queue; 10 alone: the cluster connector; 11 alone: the metering pass; 12 alone: heartbeats at fleet scale)")
	fs.StringVar(&cfg.ProfileDir, "profile", "", "write a CPU profile of each figure (but 7) into this directory")
	quiet := fs.Bool("q", false, "no progress lines on standard error")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	figures, err := bench.ParseNumbers(*only, bench.HeartbeatFigure)
	if err != nil {
		return nil, fmt.Errorf("-figures: %w", err)
	}
	cfg.Figures = figures
	cfg.PostgresURL = getenv("TEST_DATABASE_URL")
	if cfg.Engines, err = bench.ParseEngines(*engines, cfg.PostgresURL); err != nil {
		return nil, fmt.Errorf("-engines: %w", err)
	}
	if !*quiet {
		cfg.Log = stderr
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
	cfg := o.cfg
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	start := time.Now()
	machine := bench.Describe(ctx, cfg)
	rep := bench.Run(ctx, cfg)
	took := time.Since(start)

	fmt.Println()
	rep.Text(os.Stdout)
	fmt.Printf("\n%s in %s\n", strings.Join(machine.Lines(), "; "), took.Round(time.Second))
	if o.out != "" {
		if err := writeMarkdown(o.out, rep, machine, cfg, took); err != nil {
			fail("%v", err)
		}
	}
}

const (
	begin, end           = "<!-- bench:begin -->", "<!-- bench:end -->"
	queueBegin, queueEnd = "<!-- bench-queue:begin -->", "<!-- bench-queue:end -->"
	queueFigure          = 9
	clusterBegin         = "<!-- bench-cluster:begin -->"
	clusterEnd           = "<!-- bench-cluster:end -->"
	meteringBegin        = "<!-- bench-metering:begin -->"
	meteringEnd          = "<!-- bench-metering:end -->"
	heartbeatBegin       = "<!-- bench-heartbeat:begin -->"
	heartbeatEnd         = "<!-- bench-heartbeat:end -->"
)

// writeMarkdown replaces the generated parts of path (between the markers)
// that this run measured, or writes a new file with only those parts.
func writeMarkdown(path string, rep *bench.Report, m bench.Machine, cfg bench.Config, took time.Duration) error {
	others, queue := false, len(cfg.Figures) == 0 || cfg.Figures[queueFigure]
	for f := 1; f < queueFigure; f++ {
		others = others || len(cfg.Figures) == 0 || cfg.Figures[f]
	}
	if others {
		part := rep.Only(func(f int) bool { return f < queueFigure })
		if err := bench.WriteSection(path, begin, end, section(part, m, cfg, took, "")); err != nil {
			return err
		}
	}
	if queue {
		part := rep.Only(func(f int) bool { return f == queueFigure })
		if err := bench.WriteSection(path, queueBegin, queueEnd, section(part, m, cfg, took, " -figures 9")); err != nil {
			return err
		}
	}
	// Figure 10 has rows only where it ran: skipped (no kube-apiserver
	// built), its section stays as it was.
	if part := rep.Only(func(f int) bool { return f == bench.ClusterFigure }); len(part.Rows()) > 0 {
		if err := bench.WriteSection(path, clusterBegin, clusterEnd, section(part, m, cfg, took, clusterFlags(cfg))); err != nil {
			return err
		}
	}
	if part := rep.Only(func(f int) bool { return f == bench.MeteringFigure }); len(part.Rows()) > 0 {
		if err := bench.WriteSection(path, meteringBegin, meteringEnd, section(part, m, cfg, took, " -figures 11")); err != nil {
			return err
		}
	}
	if part := rep.Only(func(f int) bool { return f == bench.HeartbeatFigure }); len(part.Rows()) > 0 {
		return bench.WriteSection(path, heartbeatBegin, heartbeatEnd, section(part, m, cfg, took, heartbeatFlags(cfg)))
	}
	return nil
}

// heartbeatFlags are the flags of figure 12's command line that differ
// from the defaults.
func heartbeatFlags(cfg bench.Config) string {
	d := bench.Defaults()
	return figureFlags(bench.HeartbeatFigure,
		flagValue{"heartbeat-nodes", cfg.HeartbeatNodes, d.HeartbeatNodes},
		flagValue{"heartbeat-agents", cfg.HeartbeatClients, d.HeartbeatClients},
		flagValue{"heartbeats", cfg.HeartbeatRequests, d.HeartbeatRequests})
}

// clusterFlags are the flags of figure 10's command line that differ
// from the defaults, so the section says how it was measured.
func clusterFlags(cfg bench.Config) string {
	d := bench.Defaults()
	return figureFlags(bench.ClusterFigure,
		flagValue{"cluster-nodes", cfg.ClusterNodes, d.ClusterNodes},
		flagValue{"cluster-pods", cfg.ClusterPods, d.ClusterPods},
		flagValue{"cluster-rate", cfg.ClusterRate, d.ClusterRate},
		flagValue{"cluster-steady", cfg.ClusterSteady, d.ClusterSteady})
}

// flagValue is one flag of a figure's command line: its value in this run
// and its default.
type flagValue struct {
	name       string
	value, def any
}

// figureFlags is the command line that runs figure fig alone with the
// flags of flags whose value is not their default.
func figureFlags(fig int, flags ...flagValue) string {
	f := fmt.Sprintf(" -figures %d", fig)
	for _, x := range flags {
		if x.value != x.def {
			f += fmt.Sprintf(" -%s %v", x.name, x.value)
		}
	}
	return f
}

func section(rep *bench.Report, m bench.Machine, cfg bench.Config, took time.Duration, flags string) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "Measured %s with `make bench` (`go run ./cmd/benchreport%s -o BENCHMARKS.md`), %s in all; loader wait %s.\n\n",
		time.Now().UTC().Format("2006-01-02"), flags, took.Round(time.Second), loaderWait(cfg))
	for _, l := range m.Lines() {
		b.WriteString("- " + l + "\n")
	}
	b.WriteString("\n")
	rep.Markdown(&b)
	return b.String()
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
