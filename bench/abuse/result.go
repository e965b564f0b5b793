package abuse

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"gpugraph/internal/store"
)

// Statuses counts what an attack's requests answered: an HTTP status
// ("401"), or what happened instead ("timeout", "reset", "open": still
// unanswered when the phase ended, "closed 4408": a WebSocket closed by
// the server with that code). Safe for concurrent use.
type Statuses struct {
	mu sync.Mutex
	n  map[string]int
}

// Add counts one answer.
func (s *Statuses) Add(key string) { s.AddN(key, 1) }

// AddN counts n answers alike.
func (s *Statuses) AddN(key string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n == nil {
		s.n = map[string]int{}
	}
	s.n[key] += n
}

// Count is how many answered key.
func (s *Statuses) Count(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n[key]
}

// Total is how many answers were counted.
func (s *Statuses) Total() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := 0
	for _, n := range s.n {
		t += n
	}
	return t
}

// Only says every answer counted is one of keys (and there was one).
func (s *Statuses) Only(keys ...string) bool {
	return s.All(func(k string) bool { return slices.Contains(keys, k) })
}

// heldBack are the answers of a request held back at its key's share of
// the budget or at the rate limit (for the whole deployment, shared by the
// replicas): a refusal before any work, which any flood of one key may
// meet on a loaded host, whatever else its attack must be answered.
var heldBack = []string{"429", "429 RATE_LIMITED"}

// OnlyOrHeldBack is Only(keys...) that also accepts an answer held back.
func (s *Statuses) OnlyOrHeldBack(keys ...string) bool {
	return s.Only(append(keys, heldBack...)...)
}

// All says every answer counted is one that ok accepts (and there was one).
func (s *Statuses) All(ok func(key string) bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.n) == 0 {
		return false
	}
	for k := range s.n {
		if !ok(k) {
			return false
		}
	}
	return true
}

// String lists the answers, most frequent first: "401×100, 503×2".
func (s *Statuses) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]string, 0, len(s.n))
	for k := range s.n {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if s.n[keys[i]] != s.n[keys[j]] {
			return s.n[keys[i]] > s.n[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s×%d", k, s.n[k])
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// Latencies are one run of the victim's requests.
type Latencies struct {
	OK     []time.Duration // answered as they should, sorted
	Errors int             // refused, failed or not answered in time
	First  string          // the first error, for the log
}

// Quantile is the q-th latency of the successful requests (0 ≤ q ≤ 1).
func (l Latencies) Quantile(q float64) time.Duration {
	if len(l.OK) == 0 {
		return 0
	}
	return l.OK[min(len(l.OK)-1, int(q*float64(len(l.OK))))]
}

// Victim is the victim tenant's latency before, during and after an
// attack.
type Victim struct {
	What             string // the victim's request, in words
	Baseline, During Latencies
	// After is a second baseline, once the attack is over (none when it
	// ran out of its time box: its servers were still busy).
	After *Latencies
}

// Base is the baseline the attack is compared with: of the windows before
// and after it, the one with the higher p99, so the machine's own noise in
// either does not count as the attack's.
func (v *Victim) Base() Latencies {
	if v.After != nil && v.After.Quantile(0.99) > v.Baseline.Quantile(0.99) {
		return *v.After
	}
	return v.Baseline
}

// Ratio is the victim's p99 during the attack over its baseline p99.
func (v *Victim) Ratio() float64 {
	b := v.Base().Quantile(0.99)
	if b <= 0 {
		return 0
	}
	return float64(v.During.Quantile(0.99)) / float64(b)
}

// Result is one attack on one engine: what it cost and whether that is
// within the bounds.
type Result struct {
	Attack *Attack
	Engine store.Dialect

	// Requests were sent in the phase the per-request figures come from,
	// InFlight of them at once.
	Requests, InFlight int
	// CPU is server CPU per request (with PostgreSQL, its backends' too).
	CPU time.Duration
	// Memory is peak resident memory grown per request: the peak growth of
	// that phase over the requests in flight at once.
	Memory int64
	// Retained is the heap the set of requests left behind, where the
	// attack bounds it (nil elsewhere).
	Retained *int64
	// Lower says the figures are lower bounds: a phase ran into its time
	// box with requests unanswered.
	Lower bool

	// Statuses are every answer of every phase of the attack.
	Statuses Statuses
	// OK says the outcome is what the finding requires; Outcome says what
	// happened beside the statuses (a leak counted, a size measured).
	OK      bool
	Outcome string

	// Victim is set for the noisy-neighbour attacks.
	Victim *Victim
	// CPUBound and MemoryBound replace the defaults for an attack that
	// is not a read-only key's request (zero: the defaults).
	CPUBound    time.Duration
	MemoryBound int64
	// VictimSlack, when set, replaces MaxP99Ratio: the victim's p99 may be
	// this much above its baseline (an attack whose finding bounds how long
	// the victim may wait, not by how much).
	VictimSlack time.Duration

	// Err says the attack could not be run: its setup failed.
	Err error

	measured bool // per-request figures are set (by the first phase that sets them)
}

func (r *Result) cpuBound() time.Duration {
	if r.CPUBound > 0 {
		return r.CPUBound
	}
	return MaxCPUPerRequest
}

func (r *Result) memoryBound() int64 {
	if r.MemoryBound > 0 {
		return r.MemoryBound
	}
	return MaxMemoryPerRequest
}

// Failures name the bounds the result breaks: "error", "outcome", "CPU",
// "memory", "heap", "victim errors", "victim p99"; none when it passes.
func (r *Result) Failures() []string {
	if r.Err != nil {
		return []string{"error"}
	}
	var f []string
	if !r.OK {
		f = append(f, "outcome")
	}
	if r.CPU > r.cpuBound() {
		f = append(f, "CPU")
	}
	if r.Memory > r.memoryBound() {
		f = append(f, "memory")
	}
	if r.Retained != nil && *r.Retained > r.memoryBound() {
		f = append(f, "heap")
	}
	if v := r.Victim; v != nil {
		if v.During.Errors > 0 {
			f = append(f, "victim errors")
		}
		slow := v.Ratio() > MaxP99Ratio
		if r.VictimSlack > 0 {
			slow = v.During.Quantile(0.99) > v.Base().Quantile(0.99)+r.VictimSlack
		}
		if slow || len(v.During.OK) == 0 {
			f = append(f, "victim p99")
		}
	}
	return f
}

// Passed says the result is within every bound.
func (r *Result) Passed() bool { return len(r.Failures()) == 0 }

// Verdict is "PASS", or "FAIL: " and what failed.
func (r *Result) Verdict() string {
	if f := r.Failures(); len(f) > 0 {
		return "FAIL: " + strings.Join(f, ", ")
	}
	return "PASS"
}
