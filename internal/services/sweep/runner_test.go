package sweep

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"gpugraph/internal/dataset"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// A runner holds off for one grace period after it starts, then sweeps
// on its ticker; it returns when its context ends.
func TestRunnerHoldsOffOneGrace(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		_, err := dataset.LoadFile(context.Background(), st, []byte(`{
			"nodes": [{"id": "n", "name": "n", "status": "online", "lastHeartbeatAt": "2020-01-01T00:00:00Z"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
		r := NewRunner(New(st), Options{Grace: time.Hour, Interval: 2 * time.Millisecond, ProvisionTimeout: time.Hour})
		r.clock = func() time.Time {
			mu.Lock()
			defer mu.Unlock()
			return now
		}
		r.log = slog.New(slog.NewTextHandler(io.Discard, nil))
		status := func() models.NodeStatus {
			var n models.Node
			storetest.Take(t, st, &n, "nodes", "id = ?", "n")
			return n.Status
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			r.Run(ctx)
		}()

		// Many ticks, but the runner's clock has not passed the grace.
		time.Sleep(100 * time.Millisecond)
		if s := status(); s != models.NodeOnline {
			t.Fatalf("swept during the hold-off: node %s", s)
		}
		mu.Lock()
		now = now.Add(time.Hour)
		mu.Unlock()
		deadline := time.Now().Add(10 * time.Second)
		for status() != models.NodeOffline {
			if time.Now().After(deadline) {
				t.Fatal("no sweep within 10s after the hold-off")
			}
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("the runner did not stop with its context")
		}
	})
}

// A zero provision timeout is the default one.
func TestRunnerDefaults(t *testing.T) {
	if r := NewRunner(nil, Options{Grace: time.Second, Interval: time.Second}); r.o.ProvisionTimeout != DefaultProvisionTimeout {
		t.Errorf("provision timeout %v, want %v", r.o.ProvisionTimeout, DefaultProvisionTimeout)
	}
}
