package peer

import (
	"fmt"
	"io"
	"strings"
	"time"

	"gpugraph/bench/proc"
)

// Markdown writes the run as BENCHMARKS.md's peer section: the machine,
// the versions, and one table of latency and CPU, one of requests/s, each
// server a column and gpugraph's ratio to the best peer beside the issue's
// target.
func (r *Report) Markdown(w io.Writer, cfg Config) {
	var labels []string
	for _, p := range cfg.Peers {
		labels = append(labels, p.Label())
	}
	fmt.Fprintf(w, "Measured %s with `make bench-peer`, %s in all: a fleet of %d nodes (%d GPUs), %d pods and %d VMs over %d tenants on one PostgreSQL database, `VACUUM (ANALYZE)`d; %s as processes of their own on loopback ports; clients in the measuring process, %s. Load average (1 min) %.1f when the measuring started, %.1f when it ended.\n\n",
		r.Started.Format("2006-01-02"), r.Took.Round(time.Second), cfg.Nodes, cfg.Nodes*8, cfg.Pods, cfg.Nodes*cfg.VMsPerNode, cfg.Tenants, and(append([]string{"gpugraph"}, labels...)), gzipNote(cfg.NoGzip), r.Load[0], r.Load[1])
	for _, l := range r.Machine.Lines() {
		if strings.HasPrefix(l, "SQLite") {
			continue
		}
		fmt.Fprintf(w, "- %s\n", l)
	}
	for _, p := range cfg.Peers {
		fmt.Fprintf(w, "- %s: %s on Node.js %s (`NODE_ENV=production`, %s)\n", p.Name, p.Label(), r.Node[p.Name], p.how())
	}
	fmt.Fprintln(w)

	head := func(first ...string) {
		cols := append(first, "gpugraph")
		for _, p := range cfg.Peers {
			cols = append(cols, p.Name)
		}
		cols = append(cols, "÷ best peer", "target")
		fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(cols, " | "), strings.Repeat(" --- |", len(cols)))
	}
	fmt.Fprintf(w, "Latency, one client, median of %d interleaved runs (after %d warm-up rounds):\n\n", cfg.Runs, cfg.Warmup)
	head("query", "objects")
	for _, x := range r.Results {
		lr := ratio(x.Ours.Latency, x.BestLatency())
		cells := []string{x.Query.Name + " " + x.Query.What, fmt.Sprint(r.Objects[x.Query.Name]), ms(x.Ours.Latency)}
		for _, p := range x.Peers {
			cells = append(cells, ms(p.Latency))
		}
		cells = append(cells, fmt.Sprintf("%.2f %s", lr, mark(lr <= x.Query.Latency)), fmt.Sprintf("≤ %g", x.Query.Latency))
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	fmt.Fprintf(w, "\nCPU per request over the same runs, server process + its PostgreSQL backends (from `/proc` clock ticks: rough):\n\n")
	cols := []string{"query", "gpugraph"}
	for _, p := range cfg.Peers {
		cols = append(cols, p.Name)
	}
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(cols, " | "), strings.Repeat(" --- |", len(cols)))
	for _, x := range r.Results {
		cells := []string{x.Query.Name, cpuMS(x.Ours)}
		for _, p := range x.Peers {
			cells = append(cells, cpuMS(p))
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}

	fmt.Fprintf(w, "\nRequests/s, closed loops, median of %d interleaved %s rounds per query, client count and server (the issue's target is at 16 clients):\n\n", cfg.Rounds, cfg.RoundTime)
	head("query", "clients")
	for _, x := range r.Results {
		for _, c := range cfg.Clients {
			rr := 0.0
			if b := x.BestRPS(c); b > 0 {
				rr = x.Ours.RPS[c] / b
			}
			cells := []string{x.Query.Name, fmt.Sprint(c), fmt.Sprintf("%.0f", x.Ours.RPS[c])}
			for _, p := range x.Peers {
				cells = append(cells, fmt.Sprintf("%.0f", p.RPS[c]))
			}
			target, got := "—", fmt.Sprintf("%.2f", rr)
			if c == 16 {
				target, got = fmt.Sprintf("≥ %g", x.Query.RPS16), got+" "+mark(rr >= x.Query.RPS16)
			}
			cells = append(cells, got, target)
			fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
		}
	}
	r.memory(w, cfg)
}

// memory writes each server's resident memory after the load rounds and
// whether gpugraph's is under the lightest peer's.
func (r *Report) memory(w io.Writer, cfg Config) {
	if len(r.Memory) != len(cfg.Peers)+1 {
		return
	}
	cols := []string{"gpugraph"}
	for _, p := range cfg.Peers {
		cols = append(cols, p.Name)
	}
	lightest := int64(0)
	cells := []string{mib(r.Memory[0])}
	for _, m := range r.Memory[1:] {
		if lightest == 0 || m.RSS < lightest {
			lightest = m.RSS
		}
		cells = append(cells, mib(m))
	}
	cols = append(cols, "target")
	cells = append(cells, "under the lightest peer's "+mark(r.Memory[0].RSS < lightest))
	fmt.Fprintf(w, "\nResident memory of each server process after the load rounds (its peak since it started):\n\n")
	fmt.Fprintf(w, "| %s |\n|%s\n| %s |\n", strings.Join(cols, " | "), strings.Repeat(" --- |", len(cols)), strings.Join(cells, " | "))
}

// mib is a resident set and its peak in MiB.
func mib(m proc.Mem) string {
	return fmt.Sprintf("%d MiB (%d MiB)", m.RSS>>20, m.Peak>>20)
}

// gzipNote says what the clients asked of the answers' encoding.
func gzipNote(noGzip bool) string {
	if noGzip {
		return "asking for answers uncompressed (`-no-gzip`)"
	}
	return "accepting gzip as Go's client does (gpugraph compresses its answers, PostGraphile does not)"
}

// how says how p is configured, for the table's notes.
func (p Peer) how() string {
	if strings.HasPrefix(p.Version, "5.") {
		return "the amber preset, the smart tags file, mutations off"
	}
	return "`--classic-ids`, `--disable-default-mutations`, `--disable-query-log`"
}

// and joins names as a sentence does: "a", "a and b", "a, b and c".
func and(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

func mark(ok bool) string {
	if ok {
		return "✓"
	}
	return "✗"
}

func cpuMS(s *Side) string {
	f := func(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d.Microseconds())/1000) }
	return f(s.CPU) + " + " + f(s.DBCPU) + " ms"
}
