package abuse

import (
	"context"
	"fmt"
	"os"
	"time"

	"gpugraph/bench"
	"gpugraph/bench/proc"
	"gpugraph/internal/dataset"
	"gpugraph/internal/store"
)

// Run loads the fixture into a fresh database per engine and runs every
// attack cfg picks against freshly started servers.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	server, err := proc.Binary(cfg.Server)
	if err != nil {
		return nil, err
	}
	cfg.Server = server
	rep := &Report{Engines: cfg.Engines, Results: map[store.Dialect][]*Result{}, Started: time.Now().UTC(), Load: map[store.Dialect][2]float64{}}
	rep.Machine = bench.Describe(ctx, bench.Config{PostgresURL: cfg.PostgresURL, Engines: cfg.Engines})
	for _, engine := range cfg.Engines {
		before, _ := proc.LoadAverage()
		rs, err := runEngine(ctx, cfg, engine)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", EngineTitle(engine), err)
		}
		after, _ := proc.LoadAverage()
		rep.Results[engine], rep.Load[engine] = rs, [2]float64{before, after}
	}
	rep.Took = time.Since(rep.Started)
	return rep, nil
}

func runEngine(ctx context.Context, cfg Config, engine store.Dialect) ([]*Result, error) {
	logf := func(format string, args ...any) {
		if cfg.Log != nil {
			fmt.Fprintf(cfg.Log, "[%s %s] %s\n", time.Now().Format("15:04:05"), engine, fmt.Sprintf(format, args...))
		}
	}
	db, err := bench.FreshDB(ctx, engine, cfg.PostgresURL)
	if err != nil {
		return nil, err
	}
	defer db.Drop()
	fx := newFixture()
	if _, err := dataset.Load(ctx, db.Store, fx.file); err != nil {
		return nil, fmt.Errorf("load the fixture: %w", err)
	}
	dir, err := os.MkdirTemp("", "gpugraph-abuse-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	e := &env{cfg: cfg, engine: engine, db: db, fx: fx, dir: dir, http: newHTTPClient(), victimHTTP: newHTTPClient(), logf: logf}
	defer e.stop()
	var out []*Result
	for _, a := range Attacks() {
		if len(cfg.Only) > 0 && !cfg.Only[a.No] {
			continue
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		r := &Result{Attack: a, Engine: engine}
		start := time.Now()
		if err := e.start(ctx); err != nil {
			return nil, err
		}
		if err := a.run(ctx, e, r); err != nil {
			r.Err = err
		}
		logf("%d %s: %s; %s (%s)", a.No, a.Name, r.Statuses.String(), r.Verdict(), time.Since(start).Round(100*time.Millisecond))
		out = append(out, r)
	}
	return out, nil
}
