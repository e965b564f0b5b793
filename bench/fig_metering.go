package bench

import (
	"context"
	"fmt"
	"slices"
	"time"

	"gpugraph/internal/auth"
	"gpugraph/internal/services/metering"
	"gpugraph/internal/store/sqlcount"
	"gpugraph/models"
)

// MeteringFigure is the metering pass's figure (decision 0042): it has a
// section of its own in BENCHMARKS.md, so that -figures 11 rewrites it
// alone.
const MeteringFigure = 11

const (
	rowMeteringPass    = "metering pass, 10,000 running workloads of 1,000 organizations (half prepaid)"
	rowMeteringRecords = "metering records closed/s"
)

// meteringFigure is figure 11: MeteringWorkloads running workloads spread
// over MeteringOrgs organizations, every other one prepaid, on a fresh
// database; the pass that opens their cursors first, then MeteringPasses
// passes a simulated minute apart (each closes one record per workload
// and debits each prepaid organization once per batch it is in, then
// reads every prepaid organization's standing): the median pass, its statements, and the
// records closed a second over the timed passes.
func (r *runner) meteringFigure(ctx context.Context) error {
	c := r.cfg
	if c.MeteringOrgs < 1 || c.MeteringWorkloads < c.MeteringOrgs || c.MeteringPasses < 1 {
		return fmt.Errorf("metering: %d workloads of %d organizations, %d passes", c.MeteringWorkloads, c.MeteringOrgs, c.MeteringPasses)
	}
	db, err := FreshDB(ctx, r.engine, c.PostgresURL)
	if err != nil {
		return err
	}
	defer db.Drop()
	stmts, err := sqlcount.Register(db.DB)
	if err != nil {
		return err
	}
	vms := make([]models.VM, 0, c.MeteringWorkloads)
	for o := range c.MeteringOrgs {
		org := fmt.Sprintf("org-%05d", o)
		if err := db.CreateOrganization(ctx, org, org, 100_000+o, false); err != nil {
			return err
		}
	}
	// An organization's workloads are next to each other in id order, as
	// one customer's usually are: a batch debits each of its organizations once.
	per := c.MeteringWorkloads / c.MeteringOrgs
	for i := range c.MeteringWorkloads {
		o := min(i/per, c.MeteringOrgs-1)
		id := fmt.Sprintf("vm-%05d-%06d", o, i)
		vms = append(vms, models.VM{ID: id, Name: id, OrganizationID: fmt.Sprintf("org-%05d", o),
			Status: models.VMRunning, GPUCount: 1, PricePerHourCents: 100 + i%10})
	}
	if err := db.DB.WithContext(ctx).CreateInBatches(vms, 500).Error; err != nil {
		return err
	}
	// Half a minute into an hour: no pass closes across an hour, so each
	// closes one record per workload.
	at := time.Date(2026, 1, 1, 0, 0, 30, 0, time.UTC)
	m := metering.New(db.Store, func() time.Time { return at })
	prepaid := 0
	for o := 0; o < c.MeteringOrgs; o += 2 {
		if _, err := m.Grant(ctx, auth.SystemCaller(), fmt.Sprintf("org-%05d", o), 1_000_000, "bench", ""); err != nil {
			return err
		}
		prepaid++
	}
	if _, err := m.Pass(ctx); err != nil {
		return err
	}
	if err := analyze(ctx, db); err != nil {
		return err
	}
	var took []time.Duration
	var statements int64
	records, debits := 0, 0
	for range c.MeteringPasses {
		at = at.Add(time.Minute)
		var res metering.Result
		start := time.Now()
		statements += stmts.During(func() { res, err = m.Pass(ctx) })
		took = append(took, time.Since(start))
		if err != nil {
			return err
		}
		if res.Records != c.MeteringWorkloads || res.Debits < prepaid || res.Stopped != 0 {
			return fmt.Errorf("metering: a pass closed %d records, %d debits, %d stopped; want %d, at least %d, 0",
				res.Records, res.Debits, res.Stopped, c.MeteringWorkloads, prepaid)
		}
		debits = res.Debits
		records += res.Records
	}
	var total time.Duration
	for _, d := range took {
		total += d
	}
	slices.Sort(took)
	r.rep.Set(MeteringFigure, rowMeteringPass, r.engine, fmt.Sprintf("%s (median of %d; %d statements, %d records and %d debits a pass, batches of %d)",
		ms(took[len(took)/2]), len(took), statements/int64(len(took)), c.MeteringWorkloads, debits, metering.DefaultBatch))
	r.rep.Set(MeteringFigure, rowMeteringRecords, r.engine, fmt.Sprintf("%.0f", float64(records)/total.Seconds()))
	return nil
}
