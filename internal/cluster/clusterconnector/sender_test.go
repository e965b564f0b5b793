package clusterconnector

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gpugraph/internal/cluster/clusterbatch"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// sender is a sender of cluster's batches through the front, after
// sequence seq, waiting minB to maxB between retries.
func (h *harness) sender(cluster string, cred func() (string, error), seq int64, minB, maxB time.Duration) *sender {
	return &sender{url: h.syncURL(cluster), credential: cred, client: &http.Client{Timeout: 10 * time.Second}, log: h.logger(),
		minBackoff: minB, maxBackoff: maxB, seq: seq}
}

func constant(s string) func() (string, error) { return func() (string, error) { return s, nil } }

func sequences(xs []exchange) []int64 {
	var out []int64
	for _, x := range xs {
		out = append(out, x.batch.Sequence)
	}
	return out
}

func statuses(xs []exchange) []int {
	var out []int
	for _, x := range xs {
		out = append(out, x.status)
	}
	return out
}

func sameInts[T comparable](t *testing.T, what string, got, want []T) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s = %v, want %v", what, got, want)
		return
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("%s = %v, want %v", what, got, want)
			return
		}
	}
}

// A batch goes with the sequence after the sender's; an answer lost on
// its way back is asked for again with the very same body, and the
// server answers what it answered the first time (the pods created, not
// unchanged): nothing is applied twice.
func TestSenderSendsAndRetriesALostAnswer(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		h := newHarness(t, st)
		cred := h.enroll(clusterA)
		h.fault = func(n int) fault { return fault{lose: n == 1} }
		s := h.sender(clusterA, constant(cred), 100, time.Millisecond, 5*time.Millisecond)
		a, err := s.send(context.Background(), syntheticBatch(clusterA, clusterbatch.KindSnapshot, 1, 2))
		if err != nil {
			t.Fatal(err)
		}
		if *a != (answer{Sequence: 101, PodsCreated: 2, SnapshotComplete: true}) || s.seq != 101 {
			t.Errorf("answer %+v, sender's sequence %d; want sequence 101, 2 created, complete", *a, s.seq)
		}
		xs := h.exchanges()
		sameInts(t, "statuses the server answered", statuses(xs), []int{200, 200})
		sameInts(t, "sequences", sequences(xs), []int64{101, 101})
		if len(xs) == 2 && (string(xs[0].body) != string(xs[1].body) || xs[0].answer != xs[1].answer || xs[0].auth != cred) {
			t.Errorf("the retry differs from the first try:\n%s %s\n%s %s", xs[0].body, xs[0].answer, xs[1].body, xs[1].answer)
		}
		pods := h.pods(false)
		if len(pods) != 2 {
			t.Errorf("%d pods listed, want 2: %v", len(pods), pods)
		}
		fields(t, "pod 1", pods[podUID(1)], map[string]any{"name": "job-1", "clusterId": clusterA, "projectId": "team-a", "projectName": "team-a",
			"workloadId": podUID(1), "workloadName": "job-1", "k8sPhase": "Pending", "createdAt": "2026-03-01T10:00:00.000Z",
			"k8sPhaseUpdatedAt": "2026-03-01T10:00:00.000Z", "nodeName": nil, "deletedAt": nil, "tenantId": 9401,
			"containers": []any{map[string]any{"name": "main", "image": "busybox:1", "startedAt": nil}}})
	})
}

// A sender behind the server's sequence (a connector restarted with a
// lower first sequence, or one whose last batch the server applied with
// another body) resumes above the sequence the server names in details.
func TestSenderResumesAboveTheServersSequence(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		h := newHarness(t, st)
		cred := h.enroll(clusterA)
		if _, err := h.sender(clusterA, constant(cred), 999, time.Millisecond, time.Millisecond).send(context.Background(),
			syntheticBatch(clusterA, clusterbatch.KindSnapshot, 1)); err != nil {
			t.Fatal(err)
		}

		// Stale: 6 is below the server's 1000.
		behind := h.sender(clusterA, constant(cred), 5, time.Millisecond, time.Millisecond)
		a, err := behind.send(context.Background(), syntheticBatch(clusterA, clusterbatch.KindDelta, 2))
		if err != nil {
			t.Fatal(err)
		}
		if a.Sequence != 1001 || a.PodsCreated != 1 || behind.seq != 1001 {
			t.Errorf("answer %+v, sender's sequence %d; want 1001 and 1 created", *a, behind.seq)
		}
		xs := h.exchanges()[1:]
		sameInts(t, "stale: statuses", statuses(xs), []int{409, 200})
		sameInts(t, "stale: sequences", sequences(xs), []int64{6, 1001})
		if want := `{"code":409,"details":"1000","message":"sequence 6 is older than cluster \"` + clusterA + `\"'s current sequence 1000; send a sequence above 1000"`; len(xs) > 0 && !strings.HasPrefix(xs[0].answer, want) {
			t.Errorf("the server's refusal %s holds no %s", xs[0].answer, want)
		}

		// Reused: 1001 was applied with another body.
		same := h.sender(clusterA, constant(cred), 1000, time.Millisecond, time.Millisecond)
		if a, err = same.send(context.Background(), syntheticBatch(clusterA, clusterbatch.KindDelta, 3)); err != nil {
			t.Fatal(err)
		}
		if a.Sequence != 1002 || a.PodsCreated != 1 || same.seq != 1002 {
			t.Errorf("answer %+v, sender's sequence %d; want 1002 and 1 created", *a, same.seq)
		}
		xs = h.exchanges()[3:]
		sameInts(t, "reused: statuses", statuses(xs), []int{409, 200})
		sameInts(t, "reused: sequences", sequences(xs), []int64{1001, 1002})
		if want := `{"code":409,"details":"1001","message":"sequence 1001 was applied already with another body; send the next batch with a sequence above 1001"`; len(xs) > 0 && !strings.HasPrefix(xs[0].answer, want) {
			t.Errorf("the server's refusal %s holds no %s", xs[0].answer, want)
		}
		for _, want := range []string{`msg="the server holds a newer sequence: resuming above it" sent=6 current=1000`,
			`msg="the server holds a newer sequence: resuming above it" sent=1001 current=1001`} {
			if !strings.Contains(h.log.String(), want) {
				t.Errorf("the log holds no %s:\n%s", want, h.log.String())
			}
		}
		if n := len(h.pods(false)); n != 3 {
			t.Errorf("%d pods listed, want 3", n)
		}
	})
}

// An answer no retry changes (400, 403, 413, a 409 naming no sequence) is
// errRefused after one request: its sequence is spent, nothing retried.
func TestSenderGivesUpOnARefusal(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		h := newHarness(t, st)
		cred := h.enroll(clusterA)
		for _, c := range []struct {
			name, cluster, kind string
			front               int
			want                string
		}{
			{"another cluster's path", clusterB, clusterbatch.KindDelta, 0,
				`the server refused the batch: 403 this credential is cluster "` + clusterA + `"'s; it cannot write cluster "` + clusterB + `"`},
			{"a batch the server cannot read", clusterA, "rerun", 0,
				`the server refused the batch: 400 kind "rerun" must be "snapshot" or "delta"`},
			{"too large", clusterA, clusterbatch.KindDelta, http.StatusRequestEntityTooLarge,
				`the server refused the batch: 413 the front answers 413`},
			{"a conflict naming no sequence", clusterA, clusterbatch.KindDelta, http.StatusConflict,
				`the server refused the batch: 409 the front answers 409`},
		} {
			t.Run(c.name, func(t *testing.T) {
				h.fault = func(int) fault { return fault{status: c.front} }
				before := len(h.exchanges())
				s := h.sender(c.cluster, constant(cred), 41, time.Millisecond, time.Millisecond)
				a, err := s.send(context.Background(), syntheticBatch(c.cluster, c.kind, 7))
				if a != nil || !errors.Is(err, errRefused) || err.Error() != c.want {
					t.Errorf("send answered %v, %v; want errRefused: %s", a, err, c.want)
				}
				if n := len(h.exchanges()) - before; n != 1 || s.seq != 42 {
					t.Errorf("%d requests, sequence %d after; want 1 request, 42", n, s.seq)
				}
			})
		}
		if n := len(h.pods(false)); n != 0 {
			t.Errorf("%d pods listed after refusals, want 0", n)
		}
	})
}

// 5xx and 429 are retried with the same body after a backoff that
// doubles from MinBackoff up to MaxBackoff, jittered to its upper half;
// a Retry-After longer than the backoff is waited, up to MaxBackoff.
func TestSenderBacksOffWhileTheServerIsUnavailable(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		h := newHarness(t, st)
		cred := h.enroll(clusterA)
		gaps := func(xs []exchange) []time.Duration {
			var out []time.Duration
			for i := 1; i < len(xs); i++ {
				out = append(out, xs[i].at.Sub(xs[i-1].at))
			}
			return out
		}

		t.Run("doubling", func(t *testing.T) {
			h.reset()
			h.fault = func(n int) fault { return fault{status: []int{503, 500, 503, 0}[min(n, 4)-1]} }
			s := h.sender(clusterA, constant(cred), 10, 40*time.Millisecond, 100*time.Millisecond)
			a, err := s.send(context.Background(), syntheticBatch(clusterA, clusterbatch.KindSnapshot, 1))
			if err != nil || a.Sequence != 11 || a.PodsCreated != 1 {
				t.Fatalf("send: %+v %v", a, err)
			}
			xs := h.exchanges()
			sameInts(t, "statuses", statuses(xs), []int{503, 500, 503, 200})
			sameInts(t, "sequences", sequences(xs), []int64{11, 11, 11, 11})
			// Waits of 40, 80, 100 ms (capped), each at least its half.
			for i, g := range gaps(xs) {
				if least := []time.Duration{20, 40, 50}[i] * time.Millisecond; g < least {
					t.Errorf("retry %d came %v after the last, before the backoff's least %v", i+1, g, least)
				}
			}
			for i, want := range []string{`attempt=1`, `attempt=2`, `attempt=3`} {
				if !strings.Contains(h.log.String(), `msg="sync failed, retrying" sequence=11 kind=snapshot `+want) {
					t.Errorf("retry %d is not logged:\n%s", i+1, h.log.String())
				}
			}
			if !strings.Contains(h.log.String(), `err="500 the front answers 500"`) {
				t.Errorf("the log names no 500:\n%s", h.log.String())
			}
		})

		t.Run("Retry-After capped by MaxBackoff", func(t *testing.T) {
			h.reset()
			h.fault = func(n int) fault {
				if n == 1 {
					return fault{status: http.StatusTooManyRequests, retryAfter: "5"}
				}
				return fault{}
			}
			s := h.sender(clusterA, constant(cred), 20, 10*time.Millisecond, 300*time.Millisecond)
			if _, err := s.send(context.Background(), syntheticBatch(clusterA, clusterbatch.KindDelta, 2)); err != nil {
				t.Fatal(err)
			}
			xs := h.exchanges()
			sameInts(t, "statuses", statuses(xs), []int{429, 200})
			// 5 s asked, MaxBackoff 300 ms: waited 150 to 300 ms.
			if g := gaps(xs); len(g) != 1 || g[0] < 150*time.Millisecond || g[0] >= 2*time.Second {
				t.Errorf("the retry came %v after the 429, want 150 ms to 300 ms", g)
			}
		})

		t.Run("Retry-After above the backoff", func(t *testing.T) {
			h.reset()
			h.fault = func(n int) fault {
				if n == 1 {
					return fault{status: http.StatusServiceUnavailable, retryAfter: "1"}
				}
				return fault{}
			}
			s := h.sender(clusterA, constant(cred), 30, 10*time.Millisecond, 10*time.Second)
			if _, err := s.send(context.Background(), syntheticBatch(clusterA, clusterbatch.KindDelta, 3)); err != nil {
				t.Fatal(err)
			}
			// 1 s asked over a 10 ms backoff: waited 500 ms to 1 s.
			if g := gaps(h.exchanges()); len(g) != 1 || g[0] < 500*time.Millisecond {
				t.Errorf("the retry came %v after the 503, want 500 ms to 1 s", g)
			}
		})
	})
}

// A refused credential (rotated: the new one not yet read) and a
// credential that cannot be read are retried, the credential read again
// before each request, so the rotated one is picked up without a restart.
func TestSenderReadsTheCredentialAgain(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		h := newHarness(t, st)
		old := h.enroll(clusterA)
		rotated := h.enroll(clusterA) // replaces old
		var reads atomic.Int32
		cred := func() (string, error) {
			switch reads.Add(1) {
			case 1:
				return old, nil
			case 2:
				return "", errors.New("the mounted Secret is being replaced")
			}
			return rotated, nil
		}
		s := h.sender(clusterA, cred, 1, time.Millisecond, 2*time.Millisecond)
		a, err := s.send(context.Background(), syntheticBatch(clusterA, clusterbatch.KindSnapshot, 1))
		if err != nil || a.Sequence != 2 || a.PodsCreated != 1 {
			t.Fatalf("send: %+v %v", a, err)
		}
		xs := h.exchanges()
		sameInts(t, "statuses", statuses(xs), []int{401, 200})
		sameInts(t, "credentials sent", []string{xs[0].auth, xs[len(xs)-1].auth}, []string{old, rotated})
		if n := reads.Load(); n != 3 {
			t.Errorf("the credential was read %d times, want 3", n)
		}
		for _, want := range []string{`attempt=1 `, `err="401 `, `attempt=2 `, `err="read the cluster credential: the mounted Secret is being replaced"`} {
			if !strings.Contains(h.log.String(), want) {
				t.Errorf("the log holds no %s:\n%s", want, h.log.String())
			}
		}
	})
}

// send ends when its context does: during a backoff, and while the server
// cannot be reached at all.
func TestSenderStopsWhenItsContextEnds(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		h := newHarness(t, st)
		cred := h.enroll(clusterA)

		h.fault = func(int) fault { return fault{status: http.StatusServiceUnavailable} }
		s := h.sender(clusterA, constant(cred), 1, time.Minute, time.Hour)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := s.send(ctx, syntheticBatch(clusterA, clusterbatch.KindDelta, 1))
			done <- err
		}()
		h.waitExchanges(1)
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("send answered %v, want context.Canceled", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("send still waits 5 s after its context was canceled")
		}
		if n := len(h.exchanges()); n != 1 {
			t.Errorf("%d requests, want 1", n)
		}

		// Nothing listens: retried until the deadline, then its error.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ln.Close()
		down := &sender{url: "http://" + ln.Addr().String() + "/api/v1/clusters/" + clusterA + "/sync", credential: constant(cred),
			client: http.DefaultClient, log: h.logger(), minBackoff: 5 * time.Millisecond, maxBackoff: 10 * time.Millisecond}
		ctx, cancel = context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		started := time.Now()
		if _, err := down.send(ctx, syntheticBatch(clusterA, clusterbatch.KindDelta, 1)); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("send to nothing answered %v, want context.DeadlineExceeded", err)
		}
		if took := time.Since(started); took > 2*time.Second {
			t.Errorf("send to nothing took %v past its 200 ms deadline", took)
		}
		if n := strings.Count(h.log.String(), "connect: connection refused"); n < 2 {
			t.Errorf("%d refused connections logged, want the retries' (2 or more):\n%s", n, h.log.String())
		}
	})
}
