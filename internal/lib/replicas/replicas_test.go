package replicas

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// heartbeat is New's over st with id and the test's clock.
func heartbeat(st *store.Store, id string, c *clock) *Heartbeat {
	h := New(st, time.Second)
	h.id, h.now = id, c.now
	return h
}

func rows(t *testing.T, st *store.Store) []string {
	t.Helper()
	var ids []string
	storetest.Scan(t, st, &ids, "SELECT id FROM server_replicas ORDER BY id")
	return ids
}

func beat(t *testing.T, h *Heartbeat, wantN, wantRank int) {
	t.Helper()
	if err := h.Beat(context.Background()); err != nil {
		t.Fatalf("%s beat: %v", h.id, err)
	}
	if n, rank := h.Live(); n != wantN || rank != wantRank {
		t.Fatalf("%s counts %d live, rank %d; want %d, rank %d", h.id, n, rank, wantN, wantRank)
	}
}

// Three processes over one database (each its own connection pool): each
// counts the live ones and its rank among them; a stale one stops
// counting after LiveBeats intervals, one that leaves at the next beat, a
// row long stale is deleted.
func TestCountLiveReplicas(t *testing.T) {
	for _, d := range storetest.Engines() {
		t.Run(string(d), func(t *testing.T) {
			st := storetest.Replicas(t, d, 3)
			c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
			a, b, x := heartbeat(st[0], "a", c), heartbeat(st[1], "b", c), heartbeat(st[2], "c", c)
			var seen []int
			a.Watch(func(n, rank int) { seen = append(seen, n, rank) })
			if n, rank := a.Live(); n != 1 || rank != 0 {
				t.Fatalf("before any beat: %d, %d; want 1, 0", n, rank)
			}
			beat(t, x, 1, 0)
			beat(t, b, 2, 0)
			beat(t, a, 3, 0)
			beat(t, b, 3, 1)
			beat(t, x, 3, 2)
			beat(t, a, 3, 0) // no change: no call
			if got := rows(t, st[0]); len(got) != 3 {
				t.Fatalf("rows %v, want a, b, c", got)
			}

			// c stops beating: still live LiveBeats intervals after its
			// last beat, then not.
			c.add(2 * time.Second)
			beat(t, b, 3, 1)
			c.add(time.Second) // c's beat is LiveBeats s old
			beat(t, a, 3, 0)
			c.add(500 * time.Millisecond)
			beat(t, a, 2, 0)
			beat(t, b, 2, 1)

			// b leaves at a clean shutdown: a counts 1 at its next beat.
			if err := b.Leave(context.Background()); err != nil {
				t.Fatal(err)
			}
			beat(t, a, 1, 0)
			if got := rows(t, st[0]); len(got) != 2 || got[0] != "a" || got[1] != "c" {
				t.Fatalf("rows %v after b left, want a, c (c only stale)", got)
			}
			if want := []int{1, 0, 3, 0, 2, 0, 1, 0}; !slices.Equal(seen, want) {
				t.Fatalf("a's watcher saw %v, want %v (the first count, then each change)", seen, want)
			}

			// Rows unseen for forgetBeats intervals are deleted by a
			// pruning beat (a process's first, then every pruneEvery-th).
			c.add(forgetBeats*time.Second + time.Millisecond)
			d := heartbeat(st[1], "d", c)
			beat(t, d, 1, 0)
			if got := rows(t, st[0]); len(got) != 1 || got[0] != "d" {
				t.Fatalf("rows %v after a pruning beat, want d alone", got)
			}
		})
	}
}

// Run beats at once and every interval, and deletes its row when its
// context ends.
func TestRunBeatsThenLeaves(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		other := New(st, time.Hour)
		if err := other.Beat(context.Background()); err != nil {
			t.Fatal(err)
		}
		h := New(st, 10*time.Millisecond)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { h.Run(ctx); close(done) }()
		for i := 0; ; i++ {
			if n, _ := h.Live(); n == 2 {
				break
			}
			if i == 500 {
				t.Fatal("Run never counted the other process")
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
		<-done
		if got := rows(t, st); len(got) != 1 || got[0] != other.ID() {
			t.Fatalf("rows %v after Run ended, want only the other process's %s", got, other.ID())
		}
		if err := other.Beat(context.Background()); err != nil {
			t.Fatal(err)
		}
		if n, rank := other.Live(); n != 1 || rank != 0 {
			t.Fatalf("the other counts %d, rank %d after Run left; want 1, 0", n, rank)
		}
	})
}
