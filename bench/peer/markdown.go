package peer

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Markdown writes the run as BENCHMARKS.md's peer section: the machine,
// the versions, and one table of latency and CPU, one of requests/s.
func (r *Report) Markdown(w io.Writer, cfg Config) {
	fmt.Fprintf(w, "Measured %s with `make bench-peer`, %s in all: a fleet of %d nodes (%d GPUs), %d pods and %d VMs over %d tenants on one PostgreSQL database, `VACUUM (ANALYZE)`d; gpugraph and PostGraphile %s as processes of their own on loopback ports; clients in the measuring process.\n\n",
		r.Started.Format("2006-01-02"), r.Took.Round(time.Second), cfg.Nodes, cfg.Nodes*8, cfg.Pods, cfg.Nodes*cfg.VMsPerNode, cfg.Tenants, Version)
	for _, l := range r.Machine.Lines() {
		if strings.HasPrefix(l, "SQLite") {
			continue
		}
		fmt.Fprintf(w, "- %s\n", l)
	}
	fmt.Fprintf(w, "- PostGraphile: %s on Node.js %s (`NODE_ENV=production`, `--disable-query-log`)\n\n", Version, r.Node)

	fmt.Fprintf(w, "Latency, one client, median of %d interleaved runs (after %d warm-up rounds); CPU per request over the same runs, server process + its PostgreSQL backends:\n\n", cfg.Runs, cfg.Warmup)
	fmt.Fprintln(w, "| query | objects | gpugraph | PostGraphile | ratio | target | CPU per request, gpugraph | CPU per request, PostGraphile |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, x := range r.Results {
		lr := ratio(x.Ours.Latency, x.Peer.Latency)
		target, met := "≤ 1", lr <= 1
		if x.Query.Heavy {
			target, met = "≤ 0.5", lr <= 0.5
		}
		fmt.Fprintf(w, "| %s %s | %d | %s | %s | %.2f %s | %s | %s + %s | %s + %s |\n", x.Query.Name, x.Query.What, r.Objects[x.Query.Name],
			ms(x.Ours.Latency), ms(x.Peer.Latency), lr, mark(met), target,
			cpuMS(x.Ours.CPU), cpuMS(x.Ours.DBCPU), cpuMS(x.Peer.CPU), cpuMS(x.Peer.DBCPU))
	}
	fmt.Fprintf(w, "\nRequests/s, closed loops, median of %d interleaved %s rounds per query, client count and server:\n\n", cfg.Rounds, cfg.RoundTime)
	fmt.Fprintln(w, "| query | clients | gpugraph | PostGraphile | ratio | target |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- |")
	for _, x := range r.Results {
		for _, c := range cfg.Clients {
			a, b := x.Ours.RPS[c], x.Peer.RPS[c]
			rr := 0.0
			if b > 0 {
				rr = a / b
			}
			target, met := "≥ 1", rr >= 1
			if x.Query.Heavy && c == 16 {
				target, met = "≥ 2", rr >= 2
			}
			fmt.Fprintf(w, "| %s | %d | %.0f | %.0f | %.2f %s | %s |\n", x.Query.Name, c, a, b, rr, mark(met), target)
		}
	}
}

func mark(ok bool) string {
	if ok {
		return "✓"
	}
	return "✗"
}

func cpuMS(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
