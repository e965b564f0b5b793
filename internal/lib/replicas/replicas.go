// Package replicas counts the server processes of a deployment. Each
// announces itself in the database (the server_replicas table) every
// interval and counts the processes seen within the last few intervals,
// so that what a process keeps in memory for the whole deployment (the
// rate limits' buckets, package ratelimit) can hold its share. The count
// costs two small statements a beat, never one a request.
package replicas

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"sync"
	"time"

	"gpugraph/internal/store"
)

// DefaultInterval is how often a process announces itself
// (--replica-heartbeat).
const DefaultInterval = 2 * time.Second

// LiveBeats is how many intervals a process counts as live after its last
// beat: one or two missed beats (a slow statement, a clock a second off)
// do not drop it.
const LiveBeats = 3

// forgetBeats is how many intervals a row may go unseen before a beat
// deletes it (its process was killed without a clean shutdown); pruneEvery
// is how often (in beats) that delete runs.
const (
	forgetBeats = 30
	pruneEvery  = 30
)

// leaveTimeout bounds the delete of a process's own row at its shutdown.
const leaveTimeout = 2 * time.Second

// Heartbeat announces one process and keeps the last count of the live
// ones. Its zero count is 1 (this process alone) until a beat says more.
type Heartbeat struct {
	st       *store.Store
	id       string
	interval time.Duration
	now      func() time.Time
	log      *slog.Logger

	mu       sync.Mutex
	n, rank  int
	beats    int
	failing  bool
	watchers []func(n, rank int)
}

// New makes the heartbeat of this process over st, beating every interval
// (DefaultInterval when not positive), under a random id of its own.
func New(st *store.Store, interval time.Duration) *Heartbeat {
	if interval <= 0 {
		interval = DefaultInterval
	}
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		panic("replicas: random id: " + err.Error())
	}
	return &Heartbeat{st: st, id: hex.EncodeToString(b), interval: interval, now: store.Now,
		log: slog.Default(), n: 1}
}

// ID is the id this process announces itself by.
func (h *Heartbeat) ID() string { return h.id }

// Interval is how often it beats.
func (h *Heartbeat) Interval() time.Duration { return h.interval }

// Live answers the processes live at the last beat (this one included)
// and this one's rank among them in the order of their ids (0-based).
func (h *Heartbeat) Live() (n, rank int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n, h.rank
}

// Watch calls fn with the count now, then again at each beat that changes
// it. fn runs under the heartbeat's lock: it must be quick and must not
// call back into h.
func (h *Heartbeat) Watch(fn func(n, rank int)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.watchers = append(h.watchers, fn)
	fn(h.n, h.rank)
}

// Beat announces this process (one upsert of its row) and counts the live
// ones (one SELECT), telling the watchers when the count changed; every
// pruneEvery beats it also deletes the rows of processes long gone. When
// the database cannot be reached the count stays what it was.
func (h *Heartbeat) Beat(ctx context.Context) error {
	now := h.now()
	if err := h.st.BeatReplica(ctx, h.id, now); err != nil {
		return err
	}
	n, rank, err := h.st.LiveReplicas(ctx, h.id, now.Add(-LiveBeats*h.interval))
	if err != nil {
		return err
	}
	// This process's row was just written: it counts, whatever the
	// clocks of the others say.
	n = max(n, 1)
	rank = min(rank, n-1)
	h.mu.Lock()
	h.beats++
	prune := h.beats%pruneEvery == 1
	changed := n != h.n || rank != h.rank
	old := h.n
	h.n, h.rank = n, rank
	if changed {
		for _, fn := range h.watchers {
			fn(n, rank)
		}
	}
	h.mu.Unlock()
	if changed {
		h.log.InfoContext(ctx, "server replicas live", "replicas", n, "was", old, "rank", rank, "id", h.id)
	}
	if prune {
		if _, err := h.st.ForgetReplicasBefore(ctx, now.Add(-forgetBeats*h.interval)); err != nil {
			return err
		}
	}
	return nil
}

// Run beats at once and then every interval until ctx ends, then deletes
// this process's row (Leave), so the others count one fewer at their next
// beat rather than a few beats later. A failed beat is logged once until
// one succeeds again; the count stays what it was meanwhile.
func (h *Heartbeat) Run(ctx context.Context) {
	t := time.NewTicker(h.interval)
	defer t.Stop()
	for {
		err := h.Beat(ctx)
		switch {
		case err != nil && ctx.Err() != nil:
		case err != nil && !h.failing:
			h.failing = true
			h.log.WarnContext(ctx, "server replica heartbeat failed; the rate limits keep their last share until one succeeds", "err", err)
		case err == nil && h.failing:
			h.failing = false
			h.log.InfoContext(ctx, "server replica heartbeat succeeded again")
		}
		select {
		case <-ctx.Done():
			lctx, cancel := context.WithTimeout(context.Background(), leaveTimeout)
			defer cancel()
			if err := h.Leave(lctx); err != nil {
				h.log.Warn("server replica: could not delete this process's row at shutdown; it stops counting within a few beats", "err", err)
			}
			return
		case <-t.C:
		}
	}
}

// Leave deletes this process's row: the others count it no more from
// their next beat.
func (h *Heartbeat) Leave(ctx context.Context) error {
	return h.st.ForgetReplica(ctx, h.id)
}
