package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	"gpugraph/bench/fleetgen"
	"gpugraph/internal/dataset"
	"gpugraph/models"
)

const (
	rowRestarts  = "restarts/s at 16 clients over 1,000 nodes"
	rowInvariant = "double allocation after the run"
)

// restarts is figure 5: every stopped VM of a 1,000-node fleet restarted
// once, in a shuffled order, by 16 clients at once. Each node has more VMs
// than GPUs for them, so clients race for the same GPUs; afterwards no GPU,
// CPU, RAM or disk may be held twice, and exactly as many VMs hold as fit.
func (r *runner) restarts(ctx context.Context) error {
	c := r.cfg
	db, err := FreshDB(ctx, r.engine, c.PostgresURL)
	if err != nil {
		return err
	}
	f := fleetgen.Generate(fleetgen.Options{Nodes: c.RestartNodes, Tenants: c.Tenants, Seed: c.Seed, VMsPerNode: c.VMsPerNode, VMGPUs: c.VMGPUs})
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

	// How many fit: per node, its healthy GPUs over the GPUs one VM wants.
	want := 0
	for _, n := range f.Nodes {
		healthy := 0
		for _, g := range n.GPUs {
			if g.Health == models.GPUHealthy {
				healthy++
			}
		}
		want += min(c.VMsPerNode, healthy/c.VMGPUs)
	}
	type target struct{ id, token string }
	var targets []target
	org := map[string]string{}
	for t := 0; t < c.Tenants; t++ {
		org[fleetgen.OrgID(t)] = fleetgen.Token(t)
	}
	for _, v := range f.VMs {
		targets = append(targets, target{v.ID, org[v.OrganizationID]})
	}
	rng := rand.New(rand.NewPCG(c.Seed, 5))
	rng.Shuffle(len(targets), func(i, j int) { targets[i], targets[j] = targets[j], targets[i] })

	clients := map[string]*Client{}
	for _, tok := range org {
		clients[tok] = srv.Client.As(tok)
	}
	var placed, busy int64
	var tally = make(chan int, len(targets))
	l := Drive(ctx, c.Clients, len(targets), func(ctx context.Context, i int) error {
		t := targets[i]
		status, body, err := clients[t.token].Do(ctx, http.MethodPost, "/v1/vms/"+t.id+"/restart", nil)
		if err != nil {
			return err
		}
		if status != http.StatusOK && status != http.StatusServiceUnavailable {
			return fmt.Errorf("restart %s: %d %.200s", t.id, status, body)
		}
		tally <- status
		return nil
	})
	close(tally)
	for s := range tally {
		if s == http.StatusOK {
			placed++
		} else {
			busy++
		}
	}
	if l.Errors > 0 {
		return fmt.Errorf("%d of %d restarts failed, first: %w", l.Errors, l.Requests, l.FirstErr)
	}
	r.logf("%d restarts in %s: %d placed, %d busy (%d fit), p50 %s, p99 %s", l.Requests, l.Elapsed.Round(time.Millisecond),
		placed, busy, want, ms(l.Quantile(0.5)), ms(l.Quantile(0.99)))
	r.rep.Set(5, rowRestarts, r.engine, fmt.Sprintf("%.0f (p50 %s, p99 %s)", l.PerSecond(), ms(l.Quantile(0.5)), ms(l.Quantile(0.99))))
	v, err := doubleAllocations(ctx, db)
	if err != nil {
		return err
	}
	ok := v == 0 && int(placed) == want
	r.rep.Check(5, rowInvariant, "none", r.engine,
		fmt.Sprintf("%d violations; %d placed of %d that fit, %d busy", v, placed, want, busy), ok)
	return nil
}

// doubleAllocations counts rows that break the restart contract's guarantee: a holding
// VM whose GPUs are not all its own (one was claimed twice), a GPU held by
// a VM that does not hold or on another node, a node whose holding VMs
// need more CPU, RAM or disk than it has.
func doubleAllocations(ctx context.Context, db *DB) (int64, error) {
	const holding = "('running', 'deploying', 'interrupted')"
	checks := []string{
		`SELECT count(*) FROM vms v WHERE v.status IN ` + holding + `
		   AND v.gpu_count <> (SELECT count(*) FROM gpus g WHERE g.holder_vm_id = v.id)`,
		`SELECT count(*) FROM gpus g JOIN vms v ON v.id = g.holder_vm_id
		  WHERE v.status NOT IN ` + holding + ` OR v.node_id IS NULL OR g.node_id <> v.node_id`,
		`SELECT count(*) FROM nodes n WHERE
		   (SELECT coalesce(sum(v.cpu_cores), 0) FROM vms v WHERE v.node_id = n.id AND v.status IN ` + holding + `) > n.cpu_cores
		OR (SELECT coalesce(sum(v.ram_gb), 0) FROM vms v WHERE v.node_id = n.id AND v.status IN ` + holding + `) > n.ram_gb
		OR (SELECT coalesce(sum(v.disk_size_gb), 0) FROM vms v WHERE v.node_id = n.id AND v.status IN ` + holding + `) > n.disk_gb`,
	}
	var total int64
	for _, q := range checks {
		var n int64
		if err := db.WithContext(ctx).Raw(q).Scan(&n).Error; err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}
