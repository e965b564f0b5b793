package compute

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"gpugraph/internal/store"
)

// sharedWhileInFlight runs a read of q that blocks until released and,
// while it is in flight, a second read of q whose own answer is own;
// it answers what each got. The second is started and given time to join
// the first before the release, so it shares the first's answer unless the
// machine is slow enough that it joins late (then it answers own).
func sharedWhileInFlight(t *testing.T, r *candidateReads, q store.CandidateQuery, first func() ([]string, error), own []string) (a, b []string, errA, errB error) {
	t.Helper()
	reading, release := make(chan struct{}), make(chan struct{})
	type answer struct {
		ids []string
		err error
	}
	one, two := make(chan answer, 1), make(chan answer, 1)
	go func() {
		ids, err := r.read(q, func() ([]string, error) {
			close(reading)
			<-release
			return first()
		})
		one <- answer{ids, err}
	}()
	<-reading
	go func() {
		ids, err := r.read(q, func() ([]string, error) { return own, nil })
		two <- answer{ids, err}
	}()
	time.Sleep(5 * time.Millisecond)
	close(release)
	x, y := <-one, <-two
	return x.ids, y.ids, x.err, y.err
}

// TestCandidateReadsShareAReadInFlight: a create that wants the candidates
// another is reading waits for that read and gets its answer (its own read
// never runs); one that wants other candidates reads its own; after the
// read ends, the next create reads afresh; a read that failed is not
// shared, the waiting create reads its own; each gets its own copy.
func TestCandidateReadsShareAReadInFlight(t *testing.T) {
	r := &candidateReads{}
	h100 := store.CandidateQuery{GPUModelID: "h100", GPUs: 2, HostShare: true, CPUCores: 8, RAMGb: 64, DiskGb: 100, Limit: 8}
	a100 := h100
	a100.GPUModelID = "a100"
	pool := "p1"
	scoped := h100
	scoped.NodePool = &pool

	// A second read of the same query joins the first; the retries only
	// absorb a scheduler that starts the second goroutine late.
	shared := false
	for try := 0; try < 20 && !shared; try++ {
		a, b, errA, errB := sharedWhileInFlight(t, r, h100, func() ([]string, error) { return []string{"n1", "n2"}, nil }, []string{"own"})
		if errA != nil || errB != nil || fmt.Sprint(a) != "[n1 n2]" {
			t.Fatalf("reads: %v %v / %v %v", a, errA, b, errB)
		}
		switch fmt.Sprint(b) {
		case "[n1 n2]":
			shared = true
			a[0] = "changed"
			if b[0] != "n1" {
				t.Fatal("the two creates were handed one slice, not a copy each")
			}
		case "[own]":
		default:
			t.Fatalf("second read: %v", b)
		}
	}
	if !shared {
		t.Fatal("a read of the same candidates in flight was never shared in 20 tries")
	}

	// Other candidates (another model, another pool) are read on their own
	// while that read is in flight.
	reading, release := make(chan struct{}), make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = r.read(h100, func() ([]string, error) { close(reading); <-release; return []string{"n1"}, nil })
	}()
	<-reading
	for _, q := range []store.CandidateQuery{a100, scoped} {
		if ids, err := r.read(q, func() ([]string, error) { return []string{"n9"}, nil }); err != nil || fmt.Sprint(ids) != "[n9]" {
			t.Fatalf("another query %+v: %v %v, want its own read [n9]", q, ids, err)
		}
	}
	close(release)
	<-done
	if ids, err := r.read(h100, func() ([]string, error) { return []string{"n3"}, nil }); err != nil || fmt.Sprint(ids) != "[n3]" {
		t.Fatalf("after the read: %v %v, want a fresh read [n3]", ids, err)
	}

	// A shared read that failed hands its error to no one else.
	canceled := errors.New("context canceled")
	for try := 0; try < 20; try++ {
		a, b, errA, errB := sharedWhileInFlight(t, r, h100, func() ([]string, error) { return nil, canceled }, []string{"n4"})
		if !errors.Is(errA, canceled) || a != nil {
			t.Fatalf("the failed read answered %v %v", a, errA)
		}
		if errB != nil || !slices.Equal(b, []string{"n4"}) {
			t.Fatalf("after a failed shared read: %v %v, want its own read [n4]", b, errB)
		}
	}
}
