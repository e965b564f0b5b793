package abuse

import (
	"io"
	"time"

	"gpugraph/internal/store"
)

// The bounds every attack is held to (issue 23, "Done when"). Each attack
// adds the outcome its finding requires.
const (
	// MaxCPUPerRequest is the most server CPU one request may cost.
	MaxCPUPerRequest = 500 * time.Millisecond
	// MaxMemoryPerRequest is the most memory one request may cost: the
	// peak resident set it adds, or the heap a set of requests leaves.
	MaxMemoryPerRequest = 100_000_000
	// MaxP99Ratio is how much worse the victim's p99 may get while the
	// attacker's requests run.
	MaxP99Ratio = 2.0
	// NoisyRequests is how many requests the attacker's one key keeps in
	// flight in a noisy-neighbour attack; with several replicas it sends
	// BudgetPerReplica to each when that is more, so every replica's whole
	// concurrency budget is asked for, as in the finding.
	NoisyRequests = 100
	// BudgetPerReplica is the server's concurrency budget (docs/decisions/0036-concurrency-and-streams.md).
	BudgetPerReplica = 64
	// KeyPace and KeyBurst are how fast, and how many at once, an attack
	// paced under its key's rate limit sends: just under the default
	// --rate-limit of 50/s and at the default --rate-burst of 100. They are
	// the deployment's, whatever the replicas (docs/decisions/0037-rate-limits.md: each holds
	// 1/N).
	KeyPace  = 48
	KeyBurst = 100
)

// Config says what to run and where.
type Config struct {
	Server      string // the gpugraph binary to start
	PostgresURL string // the PostgreSQL server to make a database on; empty: SQLite only
	Engines     []store.Dialect

	// Only picks attacks by number (all when empty).
	Only map[int]bool

	// Box bounds each measured phase of an attack: what is not answered
	// by then is cut, counted as not answered, and its figures are lower
	// bounds.
	Box time.Duration
	// Baseline is how long the victim's latency is measured before and
	// after a noisy-neighbour attack, and the least time during one.
	Baseline time.Duration
	// Window is how long a flood (a key keeping its requests in flight)
	// lasts.
	Window time.Duration
	// VictimRate is the victim's requests per second (under its own rate
	// limit of 50).
	VictimRate float64

	Log io.Writer
}

// Defaults finish make abuse in a few minutes per engine on two cores.
func Defaults() Config {
	return Config{Box: 12 * time.Second, Baseline: 4 * time.Second, Window: 8 * time.Second, VictimRate: 40}
}

// Replicas is how many servers run on engine e: two on PostgreSQL (the
// deployment that outgrows one machine), one on SQLite.
func Replicas(e store.Dialect) int {
	if e == store.Postgres {
		return 2
	}
	return 1
}

// noisyRequests is the attacker's requests at once on engine e.
func noisyRequests(e store.Dialect) int {
	return max(NoisyRequests, BudgetPerReplica*Replicas(e))
}
