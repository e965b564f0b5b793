// Package supervise is the per-workload supervisor the node's real
// runtimes share: containerd's pods (internal/agent/containerd) and
// QEMU's VMs (internal/agent/qemu). It exists because the two differ in
// what they run, not in how they follow the server's list, and the rules
// of that are one idea each, kept in one place:
//
//   - one worker goroutine per workload id, the only one that acts on it,
//     fed the latest spec through a channel where the newest wins (the
//     server repeats its whole list every report, so an older spec not yet
//     read is moot);
//   - Apply's rule: a listed id gets a worker (a new one once its last
//     ended), an id no longer listed is pushed one stop, once, and is
//     forgotten by the Report after the one that said it was gone;
//   - the GPU ownership rule (docs/contract.md#agent, the ordering rule): a
//     GPU is never given to a second workload until the first is torn
//     down; a stop of a workload this runtime did not start holds what the
//     runtime says it may (the GPUs the stop names, or any).
//
// What the workload is (a container, a QEMU process), its volumes, its
// console and its endpoint stay in each runtime's package: its worker is
// the Run function it gives New.
package supervise

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"sync"

	"gpugraph/internal/agent/agentapi"
)

// Head is what the supervisor reads of a runtime's spec.
type Head struct {
	ID         string
	Generation int
	Action     string // agentapi.ActionRun, ActionStop, or the runtime's own
	GPUs       []string
}

// Spec is a runtime's spec of one workload generation.
type Spec interface {
	Head() Head
}

// Same reports whether a and b ask for the same thing: a worker acts on
// a spec once, however often the server repeats it.
func Same(a, b Spec) bool {
	ha, hb := a.Head(), b.Head()
	return ha.Generation == hb.Generation && ha.Action == hb.Action
}

// Specs maps the server's list to a runtime's specs, in its order.
func Specs[S Spec](as []agentapi.Assignment, from func(agentapi.Assignment) S) []S {
	ss := make([]S, len(as))
	for i, a := range as {
		ss[i] = from(a)
	}
	return ss
}

// Use is what a workload may hold of the node's GPUs: its GPUs' UUIDs, or
// any GPU.
type Use struct {
	UUIDs []string
	Any   bool
}

// Config is what New needs.
type Config[S Spec] struct {
	// Ctx ends the workers (Claim answers false once it is done).
	Ctx context.Context
	// Run is a workload's worker: it reads its specs from w.Want until Ctx
	// is done, or it returns after a stop when Stopped (Gone) says so.
	Run func(id string, w *Workload[S])
	// Stop answers the stop pushed, once, to an id no longer listed.
	Stop func(id string, generation int) S
	// Stranger answers what a workload this runtime did not start (an
	// earlier agent did) may hold when it is told stop: it holds that
	// until its worker reports it gone.
	Stranger func(s S) Use
	// Forget, when set, is called as Report forgets id, under the
	// supervisor's lock: the runtime drops what it kept of id (it must not
	// call the supervisor from it).
	Forget func(id string)
}

// Supervisor keeps a runtime's workloads and the GPUs they hold.
type Supervisor[S Spec] struct {
	cfg Config[S]
	wg  sync.WaitGroup

	mu   sync.Mutex
	work map[string]*Workload[S]
	// gpus are the GPUs each workload may use, from its claim until it is
	// released; freed is closed (and replaced) whenever an entry goes,
	// waking the claims that wait.
	gpus  map[string]Use
	freed chan struct{}
}

// New answers a Supervisor with no workloads.
func New[S Spec](cfg Config[S]) *Supervisor[S] {
	return &Supervisor[S]{cfg: cfg, work: map[string]*Workload[S]{}, gpus: map[string]Use{}, freed: make(chan struct{})}
}

// Wait waits for the workers, which return once Ctx is done.
func (sv *Supervisor[S]) Wait() { sv.wg.Wait() }

// Workload is one workload's worker state: its channel of specs and what
// it reports.
type Workload[S Spec] struct {
	want chan S // the latest desired spec; capacity 1, newest wins

	mu       sync.Mutex
	gen      int
	state    string
	message  string
	stage    string // provisioning stage while starting
	endpoint string // where it answers while it runs ("" when the runtime has none)
	unlisted bool   // no longer assigned: stopping, then forgotten once gone is reported
	ended    bool   // its worker returned (gone while unlisted): assigned again, it needs a new one
}

// Want is the worker's channel of specs.
func (w *Workload[S]) Want() <-chan S { return w.want }

// push replaces the spec not yet read, if any, with s.
func (w *Workload[S]) push(s S) {
	select {
	case <-w.want:
	default:
	}
	w.want <- s
}

// Set records what the workload reports: a running one is at stage
// ready; one exited, failed or gone has no endpoint any more.
func (w *Workload[S]) Set(gen int, state, message, stage string) {
	w.mu.Lock()
	w.gen, w.state, w.message, w.stage = gen, state, message, stage
	switch state {
	case agentapi.StateRunning:
		w.stage = agentapi.StageReady
	case agentapi.StateExited, agentapi.StateFailed, agentapi.StateGone:
		w.endpoint = ""
	}
	w.mu.Unlock()
}

// SetStage records the provisioning stage of a starting workload.
func (w *Workload[S]) SetStage(stage string) {
	w.mu.Lock()
	w.stage = stage
	w.mu.Unlock()
}

// SetEndpoint records where the workload answers.
func (w *Workload[S]) SetEndpoint(e string) {
	w.mu.Lock()
	w.endpoint = e
	w.mu.Unlock()
}

// Ended reports whether its worker returned.
func (w *Workload[S]) Ended() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ended
}

// Workload answers the workload of id, or nil.
func (sv *Supervisor[S]) Workload(id string) *Workload[S] {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	return sv.work[id]
}

// Apply makes ss the set of workloads that should exist: each is pushed
// to its worker (started when it has none, or its last ended), an id not
// listed is pushed Stop once and forgotten after it was reported gone. It
// does not wait: the workers do the work.
func (sv *Supervisor[S]) Apply(ss []S) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	listed := make(map[string]bool, len(ss))
	for _, s := range ss {
		h := s.Head()
		listed[h.ID] = true
		w := sv.work[h.ID]
		if w != nil {
			w.mu.Lock()
			w.unlisted = false
			ended := w.ended
			w.mu.Unlock()
			if ended {
				// Gone and its worker over, but not yet forgotten by a
				// Report: it is assigned afresh.
				w = nil
			}
		}
		if w == nil {
			if _, ok := sv.gpus[h.ID]; !ok && h.Action == agentapi.ActionStop {
				// A workload this runtime did not start: it may hold what
				// the runtime says until it is gone.
				sv.gpus[h.ID] = sv.cfg.Stranger(s)
			}
			w = &Workload[S]{want: make(chan S, 1), gen: h.Generation, state: agentapi.StateStarting}
			sv.work[h.ID] = w
			id := h.ID
			sv.wg.Go(func() { sv.cfg.Run(id, w) })
		}
		w.push(s)
	}
	for id, w := range sv.work {
		if listed[id] {
			continue
		}
		w.mu.Lock()
		first := !w.unlisted
		w.unlisted = true
		gen := w.gen
		w.mu.Unlock()
		if first {
			w.push(sv.cfg.Stop(id, gen))
		}
	}
}

// Report is the state of every workload, by id; one no longer listed
// that reports gone is forgotten.
func (sv *Supervisor[S]) Report() []agentapi.WorkloadReport {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	ids := slices.Sorted(maps.Keys(sv.work))
	out := make([]agentapi.WorkloadReport, 0, len(ids))
	for _, id := range ids {
		w := sv.work[id]
		w.mu.Lock()
		out = append(out, agentapi.WorkloadReport{ID: id, Generation: w.gen, State: w.state, Message: w.message, ProvisioningStage: w.stage,
			Endpoint: w.endpoint})
		forget := w.unlisted && w.state == agentapi.StateGone
		w.mu.Unlock()
		if forget {
			delete(sv.work, id)
			if sv.cfg.Forget != nil {
				sv.cfg.Forget(id)
			}
		}
	}
	return out
}

// Stopped ends a stop of generation of workload id. With err, the
// teardown failed: it reports failed, failure then err's text, and the
// worker goes on (the server repeats the stop). Without, it is Gone.
func (sv *Supervisor[S]) Stopped(id string, w *Workload[S], generation int, failure string, err error, log *slog.Logger) bool {
	if err != nil {
		log.Error("stop", "generation", generation, "err", err)
		w.Set(generation, agentapi.StateFailed, failure+err.Error(), "")
		return false
	}
	log.Info("gone", "generation", generation)
	return sv.Gone(id, w, generation)
}

// Gone records that generation of workload id is torn down: it reports
// gone, then its GPUs are released (gone is reported before a run that
// waited for them starts). It answers true when id is no longer listed:
// its worker is over and must return.
func (sv *Supervisor[S]) Gone(id string, w *Workload[S], generation int) bool {
	w.Set(generation, agentapi.StateGone, "", "")
	sv.Release(id)
	w.mu.Lock() // Apply reads ended and writes unlisted under it
	defer w.mu.Unlock()
	w.ended = w.unlisted
	return w.ended
}

// StartFailed reports that generation of workload id failed to start
// with err; what the start made is cleaned up, so its GPUs are free again.
func (sv *Supervisor[S]) StartFailed(id string, w *Workload[S], generation int, err error, log *slog.Logger) {
	log.Error("start", "generation", generation, "err", err)
	w.Set(generation, agentapi.StateFailed, err.Error(), "")
	sv.Release(id)
}

// Claim reports s starting (no stage yet), waits until no other workload
// may use one of s's GPUs, records them as id's and answers true. A spec
// for id that differs from s and comes meanwhile makes the run waited
// for moot (the server repeats s itself every report): it is put back
// for the worker's next read, unless a newer one came already, and Claim
// answers false, as it does when Ctx is done.
func (sv *Supervisor[S]) Claim(id string, s S, w *Workload[S], log *slog.Logger) bool {
	h := s.Head()
	w.Set(h.Generation, agentapi.StateStarting, "", "")
	logged := false
	for {
		sv.mu.Lock()
		other := sv.usedBy(id, h.GPUs)
		if other == "" {
			sv.gpus[id] = Use{UUIDs: h.GPUs}
		}
		freed := sv.freed
		sv.mu.Unlock()
		if other == "" {
			return true
		}
		if !logged {
			log.Info("waiting for a GPU that another workload still tears down", "generation", h.Generation, "other", other)
			logged = true
		}
		select {
		case <-sv.cfg.Ctx.Done():
			return false
		case n := <-w.want:
			if !Same(n, s) {
				sv.mu.Lock() // Apply pushes under it: a push never blocks
				select {
				case w.want <- n:
				default:
				}
				sv.mu.Unlock()
				return false
			}
		case <-freed:
		}
	}
}

// Hold records gpus as id's at once: a workload found already running
// (adopted) holds what it runs with.
func (sv *Supervisor[S]) Hold(id string, gpus []string) {
	sv.mu.Lock()
	sv.gpus[id] = Use{UUIDs: gpus}
	sv.mu.Unlock()
}

// HeldBy answers a workload other than id that may use one of gpus, or
// "": what must not be taken from under it.
func (sv *Supervisor[S]) HeldBy(id string, gpus []string) string {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	return sv.usedBy(id, gpus)
}

// usedBy answers a workload other than id that may use one of gpus, or
// ""; sv.mu is held.
func (sv *Supervisor[S]) usedBy(id string, gpus []string) string {
	if len(gpus) == 0 {
		return ""
	}
	for _, other := range slices.Sorted(maps.Keys(sv.gpus)) {
		if u := sv.gpus[other]; other != id && (u.Any || agentapi.SharesGPU(u.UUIDs, gpus)) {
			return other
		}
	}
	return ""
}

// Release forgets the GPUs of id, which no longer uses them, and wakes
// the claims that wait.
func (sv *Supervisor[S]) Release(id string) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if _, ok := sv.gpus[id]; ok {
		delete(sv.gpus, id)
		close(sv.freed)
		sv.freed = make(chan struct{})
	}
}
