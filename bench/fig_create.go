package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"sync/atomic"
	"time"

	"gpugraph/bench/fleetgen"
	"gpugraph/internal/dataset"
	"gpugraph/internal/services/compute"
	"gpugraph/internal/services/scheduler"
	"gpugraph/models"
)

const (
	rowCreates       = "creates/s at 16 clients over 1,000 nodes"
	rowCreateInvar   = "double allocation after the creates and the queue"
	rowQueueLatency  = "capacity freed → next pending VM placed, 10,000 pending"
	rowSchedulerPass = "scheduler pass, 10,000 pending, nothing fits"
)

// creates is figure 9: create and the queue. 16 clients create VMs of 2
// GPUs on an empty 1,000-node fleet, each of a node model in the fleet's
// proportions, until it is full (the last ones queue pending); then the
// queue is filled to QueuePending rows (loaded as a data set, not created
// one by one), a scheduler pass is timed with nothing fitting, and a
// scheduler runner (woken by the event log, its timer an hour) places one
// pending VM after each of QueueSamples stops: the time from the stop's
// request to the pass that placed a row. No GPU, CPU, RAM or disk may be
// held twice afterwards.
func (r *runner) creates(ctx context.Context) error {
	c := r.cfg
	db, err := FreshDB(ctx, r.engine, c.PostgresURL)
	if err != nil {
		return err
	}
	f := fleetgen.Generate(fleetgen.Options{Nodes: c.RestartNodes, Tenants: c.Tenants, Seed: c.Seed})
	if _, err := dataset.Load(ctx, db.Store, f); err != nil {
		db.Drop()
		return err
	}
	if err := analyze(ctx, db); err != nil {
		db.Drop()
		return err
	}
	srv, err := Serve(db, c, fleetgen.Token(0))
	if err != nil {
		db.Drop()
		return err
	}
	defer srv.Close()
	clients := make([]*Client, c.Tenants)
	for t := range clients {
		clients[t] = srv.Client.As(fleetgen.Token(t))
	}

	// As many 2-GPU VMs as the fleet has GPUs for, in its models' mix
	// (7 H100, 2 A100, 1 MI300X in 10): a few beyond a model's healthy
	// GPUs queue.
	n := c.RestartNodes * fleetgen.GPUsPerNode / 2
	type made struct {
		id, status string
		tenant     int
		model      string
	}
	out := make([]made, n)
	var resent atomic.Int64
	l := Drive(ctx, c.Clients, n, func(ctx context.Context, i int) error {
		t, model := i%c.Tenants, fleetgen.Catalog[[]int{0, 0, 0, 0, 0, 0, 0, 1, 1, 2}[i%10]].ID
		body, _ := json.Marshal(map[string]any{"name": fmt.Sprintf("create-%05d", i), "gpuModelId": model, "gpuCount": 2,
			"cpuCores": 16, "ramGb": 128, "diskSizeGb": 500})
		// A create that lost the race for every node it tried answers 503
		// VM_NODE_BUSY and asks to be sent again, as a client of the API
		// would; counted, as it should be rare.
		status, b, err := clients[t].Do(ctx, http.MethodPost, "/v1/vms", body)
		for try := 1; err == nil && status == http.StatusServiceUnavailable && bytes.Contains(b, []byte(`"VM_NODE_BUSY"`)) && try <= 20; try++ {
			resent.Add(1)
			time.Sleep(time.Duration(try) * 10 * time.Millisecond)
			status, b, err = clients[t].Do(ctx, http.MethodPost, "/v1/vms", body)
		}
		if err != nil {
			return err
		}
		var vm struct{ ID, Status string }
		if status != http.StatusCreated || json.Unmarshal(b, &vm) != nil {
			return fmt.Errorf("create %d: %d %.200s", i, status, b)
		}
		out[i] = made{vm.ID, vm.Status, t, model}
		return nil
	})
	if l.Errors > 0 {
		return fmt.Errorf("%d of %d creates failed, first: %w", l.Errors, l.Requests, l.FirstErr)
	}
	placed, queued := 0, 0
	for _, m := range out {
		if m.status == string(models.VMDeploying) {
			placed++
		} else {
			queued++
		}
	}
	r.logf("%d creates in %s: %d placed, %d queued, %d sent again after 503, p50 %s, p99 %s", n, l.Elapsed.Round(time.Millisecond),
		placed, queued, resent.Load(), ms(l.Quantile(0.5)), ms(l.Quantile(0.99)))
	r.rep.Set(9, rowCreates, r.engine, fmt.Sprintf("%.0f (p50 %s, p99 %s; %d placed, %d queued; %d sent again after 503 VM_NODE_BUSY)",
		l.PerSecond(), ms(l.Quantile(0.5)), ms(l.Quantile(0.99)), placed, queued, resent.Load()))
	// What fits at create: per model, the 2-GPU VMs its nodes' healthy
	// GPUs hold, or as many as were asked for.
	fits, asked := map[string]int{}, map[string]int{}
	for _, nd := range f.Nodes {
		healthy := 0
		for _, g := range nd.GPUs {
			if g.Health == models.GPUHealthy {
				healthy++
			}
		}
		fits[nd.GPUs[0].ModelID] += healthy / 2
	}
	for _, m := range out {
		asked[m.model]++
	}
	want := 0
	for m, a := range asked {
		want += min(a, fits[m])
	}

	// The queue: QueuePending rows in all, H100 VMs of every tenant.
	h100 := fleetgen.Catalog[0].ID
	var pending []dataset.VM
	for i := queued; i < c.QueuePending; i++ {
		created := fleetgen.Epoch.Add(time.Duration(i) * time.Millisecond)
		id := fmt.Sprintf("queued-%05d", i)
		pending = append(pending, dataset.VM{VM: models.VM{ID: id, Name: id, OrganizationID: fleetgen.OrgID(i % c.Tenants),
			Status: models.VMPending, StatusReason: "0/1000 nodes can take it", CreatedAt: &created, GPUModelID: &h100, GPUCount: 2,
			CPUCores: 16, RAMGb: 128, DiskSizeGb: 500, PricePerHourCents: 450, ResourceSize: "2x-" + h100, Tier: "standard",
			ComputeClass: "on_demand", ProvisioningStage: "queued"}, GPUIDs: []string{}})
	}
	if _, err := dataset.Load(ctx, db.Store, &dataset.File{VMs: pending}); err != nil {
		return fmt.Errorf("load the queue: %w", err)
	}
	if err := analyze(ctx, db); err != nil {
		return err
	}
	sched := scheduler.New(db.Store, compute.New(db.Store))
	var read int
	pass, err := Median(ctx, 1, c.LatencyRuns, func(ctx context.Context) error {
		res, err := sched.Pass(ctx)
		read = res.Read
		if err == nil && res.Placed > 0 {
			err = fmt.Errorf("a pass on the full fleet placed %d", res.Placed)
		}
		return err
	})
	if err != nil {
		return err
	}
	r.logf("scheduler pass: %s, %d rows read", ms(pass), read)
	r.rep.Set(9, rowSchedulerPass, r.engine, fmt.Sprintf("%s (reads %d rows: %d per organization)", ms(pass), read, scheduler.DefaultPerOrg))

	// The runner, woken by the stops alone.
	passes := make(chan scheduler.Result, 64)
	runner := scheduler.NewRunner(sched, scheduler.Options{Interval: time.Hour})
	runner.OnPass(func(res scheduler.Result) {
		select {
		case passes <- res:
		default:
		}
	})
	rctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { runner.Run(rctx); close(done) }()
	defer func() { stop(); <-done }()
	<-passes // its first pass, at start: nothing fits
	var running []made
	for _, m := range out {
		if m.status == string(models.VMDeploying) && m.model == h100 {
			running = append(running, m)
		}
	}
	samples := min(c.QueueSamples, len(running))
	lat := make([]time.Duration, 0, samples)
	for i := 0; i < samples; i++ {
		m := running[i*len(running)/samples]
		for len(passes) > 0 {
			<-passes
		}
		began := time.Now()
		status, b, err := clients[m.tenant].Do(ctx, http.MethodPost, "/v1/vms/"+m.id+"/stop", nil)
		if err != nil {
			return err
		}
		if status != http.StatusOK {
			return fmt.Errorf("stop %s: %d %.200s", m.id, status, b)
		}
		for placedOne := false; !placedOne; {
			select {
			case res := <-passes:
				placedOne = res.Placed > 0
			case <-time.After(30 * time.Second):
				return errors.New("no pending VM placed 30 s after a stop freed 2 H100s")
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		lat = append(lat, time.Since(began))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	q := func(p float64) time.Duration { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
	r.logf("queue: %d stops, p50 %s, p99 %s", len(lat), ms(q(0.5)), ms(q(0.99)))
	r.rep.Set(9, rowQueueLatency, r.engine, fmt.Sprintf("p50 %s, p99 %s (%d stops, from the stop's request)", ms(q(0.5)), ms(q(0.99)), len(lat)))

	v, err := doubleAllocations(ctx, db)
	if err != nil {
		return err
	}
	ok := v == 0 && placed == want
	r.rep.Check(9, rowCreateInvar, "none", r.engine, fmt.Sprintf("%d violations; %d placed at create of %d that fit", v, placed, want), ok)
	return nil
}
