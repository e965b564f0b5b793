package compute

import (
	"fmt"
	"slices"

	"golang.org/x/sync/singleflight"

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
	flights singleflight.Group
}

// read answers the candidates of q: those of a read of q in flight, or
// else of read, run here and handed to whoever asks for q meanwhile. A
// shared read that failed (its create's context ended) is run again here:
// another create's cancellation is not this one's error.
func (r *candidateReads) read(q store.CandidateQuery, read func() ([]string, error)) ([]string, error) {
	key := fmt.Sprintf("%s/%d/%t/%d/%d/%d/%s/%s/%d", q.GPUModelID, q.GPUs, q.HostShare, q.CPUCores, q.RAMGb, q.DiskGb,
		optional(q.ClusterID), optional(q.NodePool), q.Limit)
	// Do runs its function on the calling goroutine, so ran needs no lock.
	ran := false
	v, err, _ := r.flights.Do(key, func() (any, error) {
		ran = true
		return read()
	})
	if err != nil && !ran {
		return read()
	}
	ids, _ := v.([]string)
	// Each create orders and trims its own copy.
	return slices.Clone(ids), err
}

// optional is a placement scope for a key: "" for none, else quoted.
func optional(v *string) string {
	if v == nil {
		return ""
	}
	return fmt.Sprintf("%q", *v)
}
