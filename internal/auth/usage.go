package auth

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"gpugraph/internal/store"
)

// UsageThrottle is how often a credential's lastUsedAt is written at most.
const UsageThrottle = time.Minute

// usage writes credentials' lastUsedAt off the request's path: at most
// once per UsageThrottle per credential and process (and, through the
// conditional UPDATE, about once per window across replicas). A failed
// write is logged, never dropped silently; the next use after the window
// tries again.
type usage struct {
	mu      sync.Mutex
	written map[string]time.Time
	wg      sync.WaitGroup
}

func (u *usage) touch(st *store.Store, kind store.CredentialKind, id string, now time.Time) {
	key := string(kind) + "/" + id
	u.mu.Lock()
	if u.written == nil {
		u.written = map[string]time.Time{}
	}
	if last, ok := u.written[key]; ok && now.Sub(last) < UsageThrottle {
		u.mu.Unlock()
		return
	}
	u.written[key] = now
	u.mu.Unlock()
	u.wg.Add(1)
	go func() {
		defer u.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := st.TouchCredential(ctx, kind, id, now, now.Add(-UsageThrottle)); err != nil {
			slog.Warn("could not record a credential's lastUsedAt", "credential", key, "err", err)
			u.mu.Lock()
			delete(u.written, key) // the next use tries again
			u.mu.Unlock()
		}
	}()
}

// WaitUsage waits until the lastUsedAt writes started so far have ended
// (shutdown, tests).
func (a *Authenticator) WaitUsage() { a.usage.wg.Wait() }
