package compute

import (
	"fmt"
	"slices"
	"sync"

	"gpugraph/internal/store"
)

// candidateReads lets the creates of one replica that want the same
// candidates at the same moment share one read of them, as a Kubernetes
// scheduler places the pods of one moment from one snapshot: a create that
// finds the read it needs in flight on another create's transaction waits
// for its answer instead of running the aggregate again. What it shares is
// at most one statement older than its own read would be (a read without
// locks sees what was committed when it began), and only orders the nodes
// it tries: each is checked by every filter under its lock (claimNode), and
// an empty answer is read again by the create itself, over the whole
// fleet. Only a create's first read is shared, made before its
// transaction writes anything. On SQLite a create's transaction holds the
// one write lock from its start, so two reads are never in flight at once
// and none is shared.
type candidateReads struct {
	mu      sync.Mutex
	flights map[string]*candidateRead
}

// candidateRead is one read in flight: its answer once done is closed.
type candidateRead struct {
	done chan struct{}
	ids  []string
	err  error
	// waiting counts the creates waiting for it (read under mu).
	waiting int
}

// read answers the candidates of q: those of a read of q in flight, or
// else of read, run here and handed to whoever asks for q meanwhile. A
// shared read that failed (its create's context ended) is run again here.
func (r *candidateReads) read(q store.CandidateQuery, read func() ([]string, error)) ([]string, error) {
	key := fmt.Sprintf("%s/%d/%t/%d/%d/%d/%s/%s/%d", q.GPUModelID, q.GPUs, q.HostShare, q.CPUCores, q.RAMGb, q.DiskGb,
		optional(q.ClusterID), optional(q.NodePool), q.Limit)
	r.mu.Lock()
	if f := r.flights[key]; f != nil {
		f.waiting++
		r.mu.Unlock()
		<-f.done
		if f.err == nil {
			return slices.Clone(f.ids), nil
		}
		return read()
	}
	if r.flights == nil {
		r.flights = map[string]*candidateRead{}
	}
	f := &candidateRead{done: make(chan struct{})}
	r.flights[key] = f
	r.mu.Unlock()
	f.ids, f.err = read()
	r.mu.Lock()
	delete(r.flights, key)
	r.mu.Unlock()
	close(f.done)
	return slices.Clone(f.ids), f.err
}

// optional is a placement scope for a key: "" for none, else quoted.
func optional(v *string) string {
	if v == nil {
		return ""
	}
	return fmt.Sprintf("%q", *v)
}
