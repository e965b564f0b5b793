package agent

import (
	"log/slog"
	"slices"
	"sync"
	"time"

	"gpugraph/agentapi"
)

// Runtime runs the VMs and pods the server assigns to the node. The
// reporter hands it the server's list after every accepted report and
// sends what it reports in the next heartbeat. A nil Runtime runs nothing
// and reports nothing: the server then leaves the rows as they are, and a
// deploying one fails after the server's --provision-timeout.
type Runtime interface {
	// Assign replaces the set of workloads that should run: new ids or
	// generations start, ids no longer listed are dropped.
	Assign(as []agentapi.Assignment)
	// Report is the state of every assigned workload, by id.
	Report() []agentapi.WorkloadReport
}

// Messages of the simulated runtime's failures, one sentence each.
const (
	MockFailStartMessage = "the simulated runtime was told to fail it (--mock-fail-start)."
	MockExitMessage      = "its process exited by itself (--mock-exit)."
)

// MockRuntime simulates a container runtime: a workload is starting for
// StartDelay after it was assigned, then running. A workload in FailStart
// fails to start, every generation (its image is broken); one in Exit
// exits once, after it was reported running — a one-off crash, so the
// run the platform re-submits keeps running.
type MockRuntime struct {
	StartDelay time.Duration
	FailStart  []string
	Exit       []string
	Log        *slog.Logger
	// Clock is time.Now when nil (tests move it).
	Clock func() time.Time

	mu     sync.Mutex
	runs   map[string]*mockRun
	exited map[string]bool // ids whose one exit has happened
}

type mockRun struct {
	generation int
	assignedAt time.Time
	state      string
	message    string
	reported   string // the state last reported
}

func (m *MockRuntime) now() time.Time {
	if m.Clock != nil {
		return m.Clock()
	}
	return time.Now()
}

func (m *MockRuntime) log() *slog.Logger {
	if m.Log != nil {
		return m.Log
	}
	return slog.Default()
}

// Assign implements Runtime.
func (m *MockRuntime) Assign(as []agentapi.Assignment) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.runs == nil {
		m.runs, m.exited = map[string]*mockRun{}, map[string]bool{}
	}
	listed := make(map[string]bool, len(as))
	for _, a := range as {
		listed[a.ID] = true
		if r := m.runs[a.ID]; r != nil && r.generation == a.Generation {
			continue
		}
		m.runs[a.ID] = &mockRun{generation: a.Generation, assignedAt: m.now(), state: agentapi.StateStarting}
		m.log().Info("workload assigned; starting", "workload", a.ID, "generation", a.Generation, "gpus", len(a.GPUs))
	}
	for id := range m.runs {
		if !listed[id] {
			delete(m.runs, id)
			m.log().Info("workload no longer assigned; dropped", "workload", id)
		}
	}
}

// Report implements Runtime.
func (m *MockRuntime) Report() []agentapi.WorkloadReport {
	m.mu.Lock()
	defer m.mu.Unlock()
	ids := make([]string, 0, len(m.runs))
	for id := range m.runs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	out := make([]agentapi.WorkloadReport, 0, len(ids))
	for _, id := range ids {
		r := m.runs[id]
		m.advance(id, r)
		if r.state != r.reported {
			m.log().Info("workload state", "workload", id, "generation", r.generation, "state", r.state, "message", r.message)
			r.reported = r.state
		}
		out = append(out, agentapi.WorkloadReport{ID: id, Generation: r.generation, State: r.state, Message: r.message})
	}
	return out
}

// advance moves run r of id along the simulated runtime's course.
func (m *MockRuntime) advance(id string, r *mockRun) {
	switch {
	case r.state != agentapi.StateStarting && r.state != agentapi.StateRunning:
		// failed and exited are final for this generation.
	case slices.Contains(m.FailStart, id):
		r.state, r.message = agentapi.StateFailed, MockFailStartMessage
	case r.state == agentapi.StateStarting && m.now().Sub(r.assignedAt) >= m.StartDelay:
		r.state = agentapi.StateRunning
	case r.state == agentapi.StateRunning && r.reported == agentapi.StateRunning && slices.Contains(m.Exit, id) && !m.exited[id]:
		m.exited[id] = true
		r.state, r.message = agentapi.StateExited, MockExitMessage
	}
}
