package agent

import (
	"sync"

	"gpugraph/internal/agent/agentapi"
)

// assignmentBook keeps the server's latest list of what runs on this node,
// for the exporter's pod labels: each GPU is labelled with the VM or pod
// that holds it (pod = its id; OpenRelay rows have no namespace or
// container, so those stay empty).
type assignmentBook struct {
	mu    sync.Mutex
	byGPU map[string][]Workload
}

func (b *assignmentBook) set(as []agentapi.Assignment) {
	m := make(map[string][]Workload)
	for _, a := range as {
		for _, uuid := range a.GPUs {
			m[uuid] = append(m[uuid], Workload{Pod: a.ID})
		}
	}
	b.mu.Lock()
	b.byGPU = m
	b.mu.Unlock()
}

// get answers the labels by GPU UUID; it is an Assignments.
func (b *assignmentBook) get() map[string][]Workload {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.byGPU
}
