package agent

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"gpugraph/internal/agent/sim"
)

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func newMock(t *testing.T, model string) *sim.Server {
	t.Helper()
	m, err := sim.NewServer(model, "test-node")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// watched is a simulated server with discovery done and, unless XID checks
// are off, an XID watcher running until the test ends.
type watched struct {
	mock   *sim.Server
	gpus   []*GPU
	health *HealthState
}

func startWatching(t *testing.T, model string, policy XIDPolicy, prepare ...func(*sim.Server)) *watched {
	t.Helper()
	m := newMock(t, model)
	for _, p := range prepare {
		p(m)
	}
	log := testLogger(t)
	gpus, err := Discover(m, log)
	if err != nil {
		t.Fatal(err)
	}
	h := NewHealthState(gpus, log)
	w, err := NewXIDWatcher(m, gpus, h, policy, 20*time.Millisecond, log)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { w.Run(ctx) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	return &watched{mock: m, gpus: gpus, health: h}
}

func (w *watched) status(index int) (string, string) {
	return w.health.Status(w.gpus[index].UUID)
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
