package compute

import (
	"errors"
	"fmt"
	"runtime"
	"testing"

	"gpugraph/internal/store"
)

// waitFor yields until n creates wait for the read of q in flight.
func (r *candidateReads) waitFor(t *testing.T, n int) {
	t.Helper()
	for {
		r.mu.Lock()
		waiting := 0
		for _, f := range r.flights {
			waiting += f.waiting
		}
		r.mu.Unlock()
		if waiting == n {
			return
		}
		runtime.Gosched()
	}
}

// TestCandidateReadsShareAReadInFlight: a create that wants the candidates
// another is reading waits for that read and gets its answer (its own read
// never runs); one that wants other candidates reads its own; after the
// read ends, the next create reads afresh; a read that failed is not
// shared, the waiting create reads its own.
func TestCandidateReadsShareAReadInFlight(t *testing.T) {
	r := &candidateReads{}
	h100 := store.CandidateQuery{GPUModelID: "h100", GPUs: 2, HostShare: true, CPUCores: 8, RAMGb: 64, DiskGb: 100, Limit: 8}
	a100 := h100
	a100.GPUModelID = "a100"
	reading, release := make(chan struct{}), make(chan struct{})
	type answer struct {
		ids []string
		err error
	}
	first, second := make(chan answer, 1), make(chan answer, 1)
	go func() {
		ids, err := r.read(h100, func() ([]string, error) {
			close(reading)
			<-release
			return []string{"n1", "n2"}, nil
		})
		first <- answer{ids, err}
	}()
	<-reading
	go func() {
		ids, err := r.read(h100, func() ([]string, error) { return nil, errors.New("the shared read was run again") })
		second <- answer{ids, err}
	}()
	r.waitFor(t, 1)
	if ids, err := r.read(a100, func() ([]string, error) { return []string{"n9"}, nil }); err != nil || fmt.Sprint(ids) != "[n9]" {
		t.Fatalf("another query: %v %v, want its own read [n9]", ids, err)
	}
	close(release)
	for _, ch := range []chan answer{first, second} {
		if a := <-ch; a.err != nil || fmt.Sprint(a.ids) != "[n1 n2]" {
			t.Fatalf("shared read: %v %v, want [n1 n2]", a.ids, a.err)
		}
	}
	if ids, err := r.read(h100, func() ([]string, error) { return []string{"n3"}, nil }); err != nil || fmt.Sprint(ids) != "[n3]" {
		t.Fatalf("after the read: %v %v, want a fresh read [n3]", ids, err)
	}

	failed, release := make(chan struct{}), make(chan struct{})
	go func() {
		_, err := r.read(h100, func() ([]string, error) {
			close(failed)
			<-release
			return nil, errors.New("context canceled")
		})
		first <- answer{nil, err}
	}()
	<-failed
	go func() {
		ids, err := r.read(h100, func() ([]string, error) { return []string{"n4"}, nil })
		second <- answer{ids, err}
	}()
	r.waitFor(t, 1)
	close(release)
	if a := <-first; a.err == nil {
		t.Fatal("the failed read answered no error")
	}
	if a := <-second; a.err != nil || fmt.Sprint(a.ids) != "[n4]" {
		t.Fatalf("after a failed shared read: %v %v, want its own read [n4]", a.ids, a.err)
	}
}
