package sim

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"gpugraph/internal/agent/agentapi"
)

// Messages of the simulated runtime's failures, one sentence each.
const (
	FailStartMessage = "the simulated runtime was told to fail it (--mock-fail-start)."
	ExitMessage      = "its process exited by itself (--mock-exit)."
)

// Runtime simulates a container runtime; it implements agent.Runtime. A
// workload is starting for StartDelay after it was assigned, then running;
// a new generation (a reboot, a recreate, a run after a stop) starts over.
// While it starts it walks the provisioning stages a real runtime reports
// (pulling_image, creating_volume, booting), one stage a report, so the
// server hears each of them in order; running is ready. One told stop is
// gone StopDelay after it was told (at once when it never ran here), and
// reported gone while it is still assigned.
// A workload in FailStart fails to start, every generation (its image is
// broken); one in Exit exits once, after it was reported running — a
// one-off crash, so the run the platform re-submits keeps running.
// A run does not start (it stays starting, before pulling_image) while a
// GPU of its own is still used by another workload here that started and
// is not gone: a preempted workload tears down on GPUs the server already
// gave its preemptor (docs/contract.md#agent, the ordering rule).
type Runtime struct {
	StartDelay time.Duration
	StopDelay  time.Duration
	FailStart  []string
	Exit       []string
	Log        *slog.Logger
	// Clock is time.Now when nil (tests move it).
	Clock func() time.Time

	mu     sync.Mutex
	runs   map[string]*workload
	exited map[string]bool // ids whose one exit has happened
	// consoles are the VMs' serial consoles, by id: a few synthetic
	// lines a run (ConsoleTail), kept across its generations as a
	// console file is, bounded, dropped with the VM.
	consoles map[string][]byte
}

type workload struct {
	generation int
	assignedAt time.Time
	stopAt     time.Time // when it was told stop; zero while it runs
	state      string
	message    string
	// gpus are the UUIDs its run was given, kept when it is told stop (a
	// handed-over stop lists none: the server gave them to another).
	gpus     []string
	started  bool   // it left starting's first step: its GPUs are in use
	reported string // the state last reported
	stage    string // the provisioning stage reported last
	vm       bool   // a VM (agentapi.KindVM): it writes a console
	sshKeys  int    // how many SSH public keys its run was given
}

// startingStages are the stages a starting workload walks, in order.
var startingStages = []string{agentapi.StagePullingImage, agentapi.StageCreatingVolume, agentapi.StageBooting}

func (m *Runtime) now() time.Time {
	if m.Clock != nil {
		return m.Clock()
	}
	return time.Now()
}

func (m *Runtime) log() *slog.Logger {
	if m.Log != nil {
		return m.Log
	}
	return slog.Default()
}

// Assign implements agent.Runtime.
func (m *Runtime) Assign(as []agentapi.Assignment) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.runs == nil {
		m.runs, m.exited, m.consoles = map[string]*workload{}, map[string]bool{}, map[string][]byte{}
	}
	listed := make(map[string]bool, len(as))
	for _, a := range as {
		listed[a.ID] = true
		r := m.runs[a.ID]
		if a.Action == agentapi.ActionStop {
			switch {
			case r == nil || r.generation != a.Generation:
				// Nothing of this run is here: gone already.
				m.runs[a.ID] = &workload{generation: a.Generation, assignedAt: m.now(), state: agentapi.StateGone}
			case r.stopAt.IsZero() && r.state != agentapi.StateGone:
				if len(a.GPUs) > 0 {
					r.gpus = a.GPUs
				}
				r.stopAt = m.now()
				m.log().Info("workload told stop; tearing down", "workload", a.ID, "generation", a.Generation)
				if r.vm {
					m.writeConsole(a.ID, "ACPI: power button pressed; the system is going down for poweroff\r\n")
				}
			}
			continue
		}
		if r != nil && r.generation == a.Generation {
			continue
		}
		w := &workload{generation: a.Generation, assignedAt: m.now(), state: agentapi.StateStarting, gpus: a.GPUs,
			vm: a.Kind == agentapi.KindVM, sshKeys: len(a.SSHPublicKeys)}
		m.runs[a.ID] = w
		if w.vm {
			m.writeConsole(a.ID, fmt.Sprintf("SeaBIOS (simulated)\r\nBooting %s, generation %d: %d vCPUs, %d GB RAM, %d GPUs\r\n",
				a.ID, a.Generation, a.CPUCores, a.RAMGb, len(a.GPUs)))
		}
		m.log().Info("workload assigned; starting", "workload", a.ID, "generation", a.Generation, "gpus", len(a.GPUs),
			"action", a.Action)
	}
	for id := range m.runs {
		if !listed[id] {
			delete(m.runs, id)
			delete(m.consoles, id)
			m.log().Info("workload no longer assigned; dropped", "workload", id)
		}
	}
}

// Report implements agent.Runtime.
func (m *Runtime) Report() []agentapi.WorkloadReport {
	m.mu.Lock()
	defer m.mu.Unlock()
	ids := slices.Sorted(maps.Keys(m.runs))
	out := make([]agentapi.WorkloadReport, 0, len(ids))
	for _, id := range ids {
		r := m.runs[id]
		m.advance(id, r)
		if r.state != r.reported {
			m.log().Info("workload state", "workload", id, "generation", r.generation, "state", r.state, "message", r.message)
			r.reported = r.state
		}
		out = append(out, agentapi.WorkloadReport{ID: id, Generation: r.generation, State: r.state, Message: r.message,
			ProvisioningStage: r.stage})
	}
	return out
}

// advance moves run r of id along the simulated runtime's course.
func (m *Runtime) advance(id string, r *workload) {
	switch {
	case !r.stopAt.IsZero() && r.state != agentapi.StateGone && m.now().Sub(r.stopAt) >= m.StopDelay:
		r.state, r.message = agentapi.StateGone, ""
	case r.state != agentapi.StateStarting && r.state != agentapi.StateRunning:
		// failed, exited and gone are final for this generation.
	case slices.Contains(m.FailStart, id):
		r.state, r.message = agentapi.StateFailed, FailStartMessage
	case r.state == agentapi.StateStarting && !r.started && m.inUse(id, r.gpus):
		// Its GPUs are still another's until that one is gone; its wait
		// counts towards no start delay.
		r.assignedAt = m.now()
	case r.state == agentapi.StateStarting && r.stage != agentapi.StageBooting:
		// One stage further each report until booting.
		r.started = true
		r.stage = startingStages[slices.Index(startingStages, r.stage)+1]
	case r.state == agentapi.StateStarting && m.now().Sub(r.assignedAt) >= m.StartDelay:
		r.state, r.stage = agentapi.StateRunning, agentapi.StageReady
		if r.vm {
			m.writeConsole(id, fmt.Sprintf("cloud-init: %d SSH public keys authorized for the default user\r\n%s login: ", r.sshKeys, id))
		}
	case r.state == agentapi.StateRunning && r.reported == agentapi.StateRunning && slices.Contains(m.Exit, id) && !m.exited[id]:
		m.exited[id] = true
		r.state, r.message = agentapi.StateExited, ExitMessage
	}
}

// ConsoleBytes bounds each simulated console, as a runtime's console
// file is bounded.
const ConsoleBytes = agentapi.ConsoleBytes

// writeConsole appends s to VM id's console, keeping its last
// ConsoleBytes. The caller holds m.mu.
func (m *Runtime) writeConsole(id, s string) {
	c := append(m.consoles[id], s...)
	if len(c) > ConsoleBytes {
		c = append([]byte(nil), c[len(c)-ConsoleBytes:]...)
	}
	m.consoles[id] = c
}

// ConsoleTail implements agent.ConsoleReader: the simulated VM's console,
// a few lines a run (its boot, how many SSH keys cloud-init was given,
// a login prompt, an ACPI power-off when told stop); nil for a pod or an
// id not assigned here.
func (m *Runtime) ConsoleTail(id string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.consoles[id]), nil
}

// inUse reports whether a workload other than id that started here and is
// not gone uses one of gpus.
func (m *Runtime) inUse(id string, gpus []string) bool {
	for other, r := range m.runs {
		if other != id && r.started && r.state != agentapi.StateGone && agentapi.SharesGPU(r.gpus, gpus) {
			return true
		}
	}
	return false
}
