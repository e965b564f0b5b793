package abuse

import (
	"fmt"
	"io"
	"strings"
	"time"

	"gpugraph/bench"
	"gpugraph/internal/store"
)

// Report is a whole run: every attack's result on every engine.
type Report struct {
	Engines []store.Dialect
	Results map[store.Dialect][]*Result
	Machine bench.Machine
	Started time.Time
	Took    time.Duration
	// Load is each engine's run's one-minute load average at its start and
	// its end: on a shared machine, what the victim's latency competed with.
	Load map[store.Dialect][2]float64
}

// Failed counts the results outside their bounds.
func (r *Report) Failed() int {
	n := 0
	for _, rs := range r.Results {
		for _, x := range rs {
			if !x.Passed() {
				n++
			}
		}
	}
	return n
}

// Header are the table's columns.
var Header = []string{"#", "issue: finding", "attack", "answered", "want", "CPU / request", "memory / request", "victim p50 / p99: baseline → during", "verdict"}

// Cells are one result's row of the table.
func (x *Result) Cells() []string {
	a := x.Attack
	answered := x.Statuses.String()
	if x.Outcome != "" {
		answered += "; " + x.Outcome
	}
	cpu, mem, victim := "—", "—", "—"
	if x.Err != nil {
		answered = "error: " + x.Err.Error()
	} else if x.measured {
		cpu, mem = seconds(x.CPU), megabytes(x.Memory)
		if x.Lower {
			cpu, mem = "≥ "+cpu, "≥ "+mem
		}
		if x.Requests > 0 {
			mem += fmt.Sprintf(" (%d at once)", max(x.InFlight, 1))
		}
	}
	if x.Retained != nil {
		mem += "; heap kept " + megabytes(*x.Retained) + " after all"
	}
	if v := x.Victim; v != nil && x.Err == nil {
		b := v.Base()
		during := fmt.Sprintf("%s / %s (×%.2f)", ms(v.During.Quantile(0.5)), ms(v.During.Quantile(0.99)), v.Ratio())
		if len(v.During.OK) == 0 {
			during = "none answered"
		}
		victim = fmt.Sprintf("%s / %s → %s, %d errors", ms(b.Quantile(0.5)), ms(b.Quantile(0.99)), during, v.During.Errors)
	}
	return []string{fmt.Sprint(a.No), fmt.Sprintf("%d: %d", a.Issue, a.Finding), a.Name, answered, a.Want, cpu, mem, victim, x.Verdict()}
}

func seconds(d time.Duration) string {
	if d >= 10*time.Second {
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return fmt.Sprintf("%.3f s", d.Seconds())
}

func megabytes(b int64) string { return fmt.Sprintf("+%.1f MB", float64(max(b, 0))/1e6) }

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

// title names an engine's table with the machine's load meanwhile.
func (r *Report) title(e store.Dialect) string {
	l, ok := r.Load[e]
	if !ok {
		return EngineTitle(e)
	}
	return fmt.Sprintf("%s (load average %.1f at the start, %.1f at the end)", EngineTitle(e), l[0], l[1])
}

// EngineTitle names an engine's table.
func EngineTitle(e store.Dialect) string {
	if e == store.Postgres {
		return fmt.Sprintf("PostgreSQL, %d replicas on one database", Replicas(e))
	}
	return "SQLite"
}

// Text writes one table per engine for a terminal.
func (r *Report) Text(w io.Writer) {
	for _, e := range r.Engines {
		fmt.Fprintf(w, "\n%s\n\n", r.title(e))
		lines := [][]string{Header}
		for _, x := range r.Results[e] {
			lines = append(lines, x.Cells())
		}
		bench.WriteText(w, lines)
	}
	fmt.Fprintf(w, "\n%d of %d results outside their bounds\n", r.Failed(), r.total())
}

func (r *Report) total() int {
	n := 0
	for _, rs := range r.Results {
		n += len(rs)
	}
	return n
}

// Markdown writes the run as BENCHMARKS.md's abuse section: when, the
// machine, the bounds, and one table per engine.
func (r *Report) Markdown(w io.Writer, cfg Config) {
	fmt.Fprintf(w, "Measured %s with `make abuse` (`go run ./cmd/abusereport -server bin/gpugraph -o BENCHMARKS.md`), %s in all: %d of %d results outside their bounds.\n\n",
		r.Started.Format("2006-01-02"), r.Took.Round(time.Second), r.Failed(), r.total())
	for _, l := range r.Machine.Lines() {
		fmt.Fprintf(w, "- %s\n", l)
	}
	fmt.Fprintf(w, "\nBounds: server CPU ≤ %g s and memory ≤ %d MB per request; the victim's p99 ≤ %g× its baseline with no errors while the attacker's one read-only key keeps %d requests in flight (%d on two replicas: %d to each) for %s, no faster than its rate limit (a *flood*); each attack's own outcome in *want*. Phases are cut after %s (figures marked ≥ are lower bounds); the victim sends %g requests/s, measured for %s before and after the attack (the noisier is its baseline) and during it.\n",
		MaxCPUPerRequest.Seconds(), MaxMemoryPerRequest/1_000_000, MaxP99Ratio, NoisyRequests, noisyRequests(store.Postgres), BudgetPerReplica, cfg.Window, cfg.Box, cfg.VictimRate, cfg.Baseline)
	for _, e := range r.Engines {
		fmt.Fprintf(w, "\n%s:\n\n", r.title(e))
		var rows [][]string
		for _, x := range r.Results[e] {
			rows = append(rows, x.Cells())
		}
		bench.WriteMarkdown(w, Header, rows)
	}
}

// Section markers of BENCHMARKS.md's abuse part.
const (
	SectionBegin = "<!-- abuse:begin -->"
	SectionEnd   = "<!-- abuse:end -->"
)

// WriteMarkdown rewrites the abuse section of the markdown file at path.
func (r *Report) WriteMarkdown(path string, cfg Config) error {
	var b strings.Builder
	r.Markdown(&b, cfg)
	return bench.WriteSection(path, SectionBegin, SectionEnd, b.String())
}
