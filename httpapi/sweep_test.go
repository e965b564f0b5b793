package httpapi

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"gpugraph/dataset"
	"gpugraph/models"
	"gpugraph/store"
	"gpugraph/store/storetest"
)

// A sweeper holds off for one grace period after it starts, then sweeps
// on its ticker; it returns when its context ends.
func TestSweeperHoldsOffOneGrace(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		_, err := dataset.LoadFile(context.Background(), st, []byte(`{
			"nodes": [{"id": "n", "name": "n", "status": "online", "lastHeartbeatAt": "2020-01-01T00:00:00Z"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
		clock := func() time.Time {
			mu.Lock()
			defer mu.Unlock()
			return now
		}
		status := func() models.NodeStatus {
			var n models.Node
			if err := st.DB.Take(&n, "id = ?", "n").Error; err != nil {
				t.Fatal(err)
			}
			return n.Status
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			runSweeper(ctx, st, time.Hour, 2*time.Millisecond, time.Hour, clock, slog.New(slog.NewTextHandler(io.Discard, nil)))
		}()

		// Many ticks, but the sweeper's clock has not passed the grace.
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
			t.Fatal("the sweeper did not stop with its context")
		}
	})
}
