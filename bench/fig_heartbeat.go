package bench

import (
	"context"
	"fmt"
	"net/http/httptest"
	"time"

	"gpugraph/internal/httpapi"
	"gpugraph/internal/httpapi/loaders"
	"gpugraph/internal/services"
	"gpugraph/internal/store"
	"gpugraph/internal/store/sqlcount"
)

// HeartbeatFigure is heartbeats at fleet scale: it has a section of its
// own in BENCHMARKS.md, so that -figures 12 rewrites it alone.
const HeartbeatFigure = 12

const (
	rowHeartbeatRate  = "heartbeats/s from a 20,000-node fleet, 64 agents at once"
	rowHeartbeatStmts = "SQL statements per heartbeat (the node credential's lookup included)"
)

// heartbeatFigure is figure 12: HeartbeatNodes nodes of 8 GPUs, each
// running one VM and holding its own node credential, heartbeat as they
// do between changes (InsertHeartbeatFleet), HeartbeatClients at once
// through the whole HTTP surface on a loopback port. Every node beats
// once untimed (the first beat writes its samples), then
// HeartbeatRequests beats are timed: heartbeats a second with p50 and
// p99, and the statements the timed beats ran, a heartbeat. A fleet of
// 20,000 nodes at the agent's default 10 s interval sends 2,000 a second.
func (r *runner) heartbeatFigure(ctx context.Context) error {
	c := r.cfg
	if c.HeartbeatNodes < 1 || c.HeartbeatClients < 1 || c.HeartbeatRequests < 1 {
		return fmt.Errorf("heartbeats: %d nodes, %d agents at once, %d heartbeats", c.HeartbeatNodes, c.HeartbeatClients, c.HeartbeatRequests)
	}
	db, err := FreshDB(ctx, r.engine, c.PostgresURL)
	if err != nil {
		return err
	}
	defer db.Drop()
	agents, err := InsertHeartbeatFleet(ctx, db.Store, c.HeartbeatNodes, time.Now())
	if err != nil {
		return err
	}
	stmts, err := sqlcount.Register(db.DB)
	if err != nil {
		return err
	}
	// Built as the command builds it; node credentials have no share of
	// their own to open.
	svc := services.New(db.Store, services.Config{})
	srv := httptest.NewServer(httpapi.New(httpapi.Config{Services: svc,
		Loaders: loaders.NewFactory(db.Store, svc.Metering, c.LoaderWait), Database: db.Store}))
	defer srv.Close()
	hc := NewHTTPClient(c.HeartbeatClients)
	r.logf("heartbeats: %d nodes written; one heartbeat each, untimed", len(agents))
	if l := DriveHeartbeats(ctx, hc, srv.URL, agents, c.HeartbeatClients, len(agents)); l.Errors > 0 {
		return fmt.Errorf("%d of %d heartbeats failed, first: %w", l.Errors, l.Requests, l.FirstErr)
	}
	var l Load
	n := stmts.During(func() {
		l = DriveHeartbeats(ctx, hc, srv.URL, agents, c.HeartbeatClients, c.HeartbeatRequests)
	})
	if l.Errors > 0 {
		return fmt.Errorf("%d of %d heartbeats failed, first: %w", l.Errors, l.Requests, l.FirstErr)
	}
	p50, p99 := l.Quantile(0.5), l.Quantile(0.99)
	r.logf("%d heartbeats in %s: %.0f/s, p50 %s, p99 %s, %d statements", l.Requests, l.Elapsed.Round(time.Millisecond),
		l.PerSecond(), ms(p50), ms(p99), n)
	rate := fmt.Sprintf("%.0f (p50 %s, p99 %s)", l.PerSecond(), ms(p50), ms(p99))
	if r.engine == store.Postgres {
		// The target is PostgreSQL's, the engine of a fleet this size.
		r.rep.Check(HeartbeatFigure, rowHeartbeatRate, "≥ 2,000, p99 ≤ 100 ms (PostgreSQL)", r.engine, rate,
			l.PerSecond() >= 2000 && p99 <= 100*time.Millisecond)
	} else {
		r.rep.Set(HeartbeatFigure, rowHeartbeatRate, r.engine, rate)
	}
	r.rep.Set(HeartbeatFigure, rowHeartbeatStmts, r.engine, fmt.Sprintf("%.1f", float64(n)/float64(l.Requests)))
	return nil
}
