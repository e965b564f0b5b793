package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Database is what the probes ask of the store (*store.Store is one).
type Database interface {
	// HealthPing is /healthz's cheap round trip.
	HealthPing(ctx context.Context) error
	// Ping and PendingMigrations are /readyz's checks.
	Ping(ctx context.Context) error
	PendingMigrations(ctx context.Context) ([]string, error)
}

// healthz answers 200 while the process is up and its database answers
// (the contract's /healthz); it does nothing else, so it stays cheap to
// probe under load.
//
// Server-Timing says how long the check took inside the server (its
// database round trip), apart from the network and the client's own
// scheduling: the abuse suite holds that to 100 ms on every probe.
func healthz(st Database) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		start := time.Now()
		err := st.HealthPing(ctx)
		w.Header().Set("Server-Timing", "db;dur="+strconv.FormatFloat(float64(time.Since(start).Microseconds())/1000, 'f', 3, 64))
		if err != nil {
			http.Error(w, "database unavailable\n", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
}

// readyz answers 200 when this process can serve: the database answers and
// every migration this binary holds is applied; else 503 with a JSON body
// naming each check that failed, for a load balancer or an operator.
func readyz(st Database) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		checks := map[string]string{"database": "ok", "migrations": "ok"}
		ready := true
		if err := st.Ping(ctx); err != nil {
			checks["database"], checks["migrations"] = "unreachable", "unknown: the database is unreachable"
			ready = false
		} else if pending, err := st.PendingMigrations(ctx); err != nil {
			checks["migrations"] = "unreadable: schema_migrations could not be read"
			ready = false
		} else if len(pending) > 0 {
			checks["migrations"] = "pending: " + strings.Join(pending, ", ")
			ready = false
		}
		status, word := http.StatusOK, "ready"
		if !ready {
			status, word = http.StatusServiceUnavailable, "not ready"
			w.Header().Set("Retry-After", "5")
		}
		writeJSONBody(w, status, map[string]any{"status": word, "checks": checks})
	})
}

func writeJSONBody(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
