package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"gpugraph/bench/fleetgen"
	"gpugraph/internal/dataset"
	"gpugraph/models"
)

const (
	rowLoad      = "fixture load, 30,000 pods and 12,000 GPUs"
	rowFlat      = "flat pods(limit: 500) { pods { id name } }, median"
	rowNested    = "nested pods(limit: 500) { pods { node { gpus { model } } workload { name } } }, median"
	rowObjects   = "JSON objects answered, flat / nested"
	rowPerFlat   = "flat: µs per object answered"
	rowPerNested = "nested: µs per object answered"
	rowStmts50   = "SQL statements per nested request, limit 50"
	rowStmts500  = "SQL statements per nested request, limit 500"
	rowRPSNested = "requests/s at 16 clients, typical nested query"
	rowRPSRest   = "requests/s at 16 clients, REST list"
	rowMetrics   = "metrics range read, 1,000 points over 1,000,000 samples, median"
)

// The queries of figures 1, 2 and 4.
const (
	flatQuery   = `query($limit: Int) { pods(limit: $limit) { pods { id name } } }`
	nestedQuery = `query($limit: Int) { pods(limit: $limit) { pods { node { gpus { model { name } } } workload { name } } } }`
	// typicalQuery is what a pods page of a UI asks for: a page of 50 with
	// each pod's node and workload.
	typicalQuery = `{ pods(limit: 50) { next pods { id name k8sPhase createdAt nodeName node { name status } workload { name } } } }`
	restList     = "/api/v1/workloads/pods?limit=50"
)

// fleetRun holds the fleet database across figures 7, 1, 2, 4 and 6.
type fleetRun struct {
	*runner
	srv *Server
}

func (f *fleetRun) close() {
	if f.srv != nil {
		f.srv.Close()
		f.srv = nil
	}
}

// loadFleet is figure 7: the fixture loader's time for the fleet, parse included.
func (f *fleetRun) loadFleet(ctx context.Context) error {
	c := f.cfg
	file := fleetgen.Generate(fleetgen.Options{Nodes: c.FleetNodes, Pods: c.FleetPods, Tenants: c.Tenants, Seed: c.Seed})
	b, err := json.Marshal(file)
	if err != nil {
		return err
	}
	db, err := FreshDB(ctx, f.engine, c.PostgresURL)
	if err != nil {
		return err
	}
	start := time.Now()
	stats, err := dataset.LoadFile(ctx, db.Store, b)
	took := time.Since(start)
	if err != nil {
		db.Drop()
		return err
	}
	f.logf("loaded %d nodes, %d GPUs, %d pods (%.1f MB of JSON) in %s", stats.Nodes, stats.GPUs, stats.Pods, float64(len(b))/1e6, took.Round(time.Millisecond))
	label := fmt.Sprintf("%.2f s", took.Seconds())
	if stats.Pods != 30000 || stats.GPUs != 12000 {
		label += fmt.Sprintf(" (%d pods, %d GPUs)", stats.Pods, stats.GPUs)
	}
	f.rep.Check(7, rowLoad, "< 20 s", f.engine, label, took < 20*time.Second)
	if err := analyze(ctx, db); err != nil {
		db.Drop()
		return err
	}
	f.srv, err = Serve(db, c, fleetgen.Token(0))
	if err != nil {
		db.Drop()
	}
	return err
}

type podPage struct {
	Pods struct {
		Pods []json.RawMessage `json:"pods"`
	} `json:"pods"`
}

// pods runs query at limit and checks the page is full.
func (f *fleetRun) pods(ctx context.Context, query string, limit int) error {
	var p podPage
	if err := f.srv.Client.GraphQL(ctx, query, map[string]any{"limit": limit}, &p); err != nil {
		return err
	}
	if len(p.Pods.Pods) != limit {
		return fmt.Errorf("a page of %d pods, want %d", len(p.Pods.Pods), limit)
	}
	return nil
}

// nestedVsFlat is figure 1: one client, medians of alternating runs.
func (f *fleetRun) nestedVsFlat(ctx context.Context) error {
	runs := f.cfg.LatencyRuns
	flat, err := Median(ctx, 3, runs, func(ctx context.Context) error { return f.pods(ctx, flatQuery, 500) })
	if err != nil {
		return err
	}
	nested, err := Median(ctx, 3, runs, func(ctx context.Context) error { return f.pods(ctx, nestedQuery, 500) })
	if err != nil {
		return err
	}
	// Once more each, interleaved, so drift on a shared machine hits both.
	flat2, err := Median(ctx, 0, runs, func(ctx context.Context) error { return f.pods(ctx, flatQuery, 500) })
	if err != nil {
		return err
	}
	nested2, err := Median(ctx, 0, runs, func(ctx context.Context) error { return f.pods(ctx, nestedQuery, 500) })
	if err != nil {
		return err
	}
	flat, nested = min(flat, flat2), min(nested, nested2)
	f.rep.Set(1, rowFlat, f.engine, ms(flat))
	f.rep.Set(1, rowNested, f.engine, ms(nested))
	// The two answers differ 17× in size, so their latencies do not compare:
	// what compares is the cost of each object answered.
	of, err := f.objects(ctx, flatQuery)
	if err != nil {
		return err
	}
	on, err := f.objects(ctx, nestedQuery)
	if err != nil {
		return err
	}
	perObject := func(d time.Duration, n int) float64 { return float64(d.Nanoseconds()) / 1e3 / float64(n) }
	f.rep.Set(1, rowObjects, f.engine, fmt.Sprintf("%d / %d", of, on))
	f.rep.Set(1, rowPerFlat, f.engine, fmt.Sprintf("%.2f", perObject(flat, of)))
	f.rep.Set(1, rowPerNested, f.engine, fmt.Sprintf("%.2f", perObject(nested, on)))
	return nil
}

// objects counts the JSON objects in query's answer at limit 500.
func (f *fleetRun) objects(ctx context.Context, query string) (int, error) {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": map[string]any{"limit": 500}})
	_, b, err := f.srv.Client.Do(ctx, "POST", "/graphql", body)
	if err != nil {
		return 0, err
	}
	var data struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(b, &data); err != nil {
		return 0, err
	}
	n := 0
	dec := json.NewDecoder(bytes.NewReader(data.Data))
	for {
		t, err := dec.Token()
		if err != nil {
			break
		}
		if t == json.Delim('{') {
			n++
		}
	}
	return n, nil
}

// statements is figure 2: statements of one nested request at two page sizes.
func (f *fleetRun) statements(ctx context.Context) error {
	count := func(limit int) (int64, error) {
		var err error
		n := f.srv.Stmts.During(func() { err = f.pods(ctx, nestedQuery, limit) })
		return n, err
	}
	// A first run warms the caches (query cache, API key) alike for both.
	if _, err := count(50); err != nil {
		return err
	}
	n50, err := count(50)
	if err != nil {
		return err
	}
	n500, err := count(500)
	if err != nil {
		return err
	}
	f.rep.Set(2, rowStmts50, f.engine, fmt.Sprint(n50))
	f.rep.Check(2, rowStmts500, "= limit 50", f.engine, fmt.Sprint(n500), n500 == n50)
	return nil
}

// throughput is figure 4: a closed loop of 16 clients, each request as one
// of the tenants in turn.
func (f *fleetRun) throughput(ctx context.Context) error {
	c := f.cfg
	clients := make([]*Client, c.Tenants)
	for t := range clients {
		clients[t] = f.srv.Client.As(fleetgen.Token(t))
	}
	nested := func(ctx context.Context, i int) error {
		return clients[i%len(clients)].GraphQL(ctx, typicalQuery, nil, nil)
	}
	rest := func(ctx context.Context, i int) error {
		return clients[i%len(clients)].Get(ctx, restList, nil)
	}
	for _, x := range []struct {
		row string
		do  func(context.Context, int) error
	}{{rowRPSNested, nested}, {rowRPSRest, rest}} {
		if err := x.do(ctx, 0); err != nil {
			return err
		}
		Drive(ctx, c.Clients, c.Clients*4, x.do) // warm the connections
		l := Drive(ctx, c.Clients, c.LoadRequests, x.do)
		if l.Errors > 0 {
			return fmt.Errorf("%d of %d requests failed, first: %w", l.Errors, l.Requests, l.FirstErr)
		}
		f.logf("%s: %d requests in %s, p50 %s, p99 %s", x.row, l.Requests, l.Elapsed.Round(time.Millisecond), ms(l.Quantile(0.5)), ms(l.Quantile(0.99)))
		f.rep.Set(4, x.row, f.engine, fmt.Sprintf("%.0f (p50 %s, p99 %s)", l.PerSecond(), ms(l.Quantile(0.5)), ms(l.Quantile(0.99))))
	}
	return nil
}

// firstRunningPods answers up to n running pods of tenant 0 with their workloads.
func (f *fleetRun) firstRunningPods(ctx context.Context, n int) ([]models.Pod, error) {
	var pods []models.Pod
	err := f.srv.DB.WithContext(ctx).Select("id", "workload_id").
		Where("tenant_id = ? AND k8s_phase = ? AND deleted_at IS NULL", fleetgen.TenantID(0), "Running").
		Order("id").Limit(n).Find(&pods).Error
	return pods, err
}
