package metering_test

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/auth"
	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/services/metering"
	"gpugraph/internal/store"
	"gpugraph/models"
)

// The reconciliation recomputes usage from the event log on its own and
// finds no difference after a clean run (a prepaid organization, a VM
// running, interrupted, running again, stopped across an hour, passes at
// uneven times); a record changed by hand is named, with its hour, and
// so is the ledger it no longer matches.
func TestReconcileNamesATamperedRecord(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		op := auth.SystemCaller()
		clk := &clock{now: t0}
		m := metering.New(st, clk.Now)
		if _, err := m.Grant(ctx, op, "org-acme", 100_000, "prepaid", "g1"); err != nil {
			t.Fatal(err)
		}
		setPrice(t, st, "vm-acme-1", 249)
		apply(t, st, "vm-acme-1", models.UserStop, t0.Add(time.Second))
		apply(t, st, "vm-acme-1", models.RestartDeploy, t0.Add(10*time.Second))
		apply(t, st, "vm-acme-1", models.AgentRunning, t0.Add(20*time.Second+333*time.Millisecond))
		apply(t, st, "vm-acme-1", models.NodeLost, t0.Add(30*time.Minute))
		apply(t, st, "vm-acme-1", models.NodeBack, t0.Add(40*time.Minute+7*time.Millisecond))
		apply(t, st, "vm-acme-1", models.UserStop, t0.Add(70*time.Minute))
		for _, at := range []time.Duration{10 * time.Minute, 47*time.Minute + 13*time.Second, 65 * time.Minute, 2*time.Hour + 30*time.Minute, 3*time.Hour + 5*time.Second} {
			clk.Set(t0.Add(at))
			if _, err := m.Pass(ctx); err != nil {
				t.Fatal(err)
			}
		}
		r, err := m.Reconcile(ctx, op, t0, t0.Add(3*time.Hour), "")
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Differences) != 0 || r.Workloads != 1 || r.Records < 6 || r.Organizations != 1 {
			t.Fatalf("a clean run: %d workloads, %d records, %d ledgers, %d unverifiable; differences %v",
				r.Workloads, r.Records, r.Organizations, r.Unverifiable, r.Differences)
		}
		// Its compute of the first hour: 30 min less 20.333 s, and 19 min 59.993 s, at 249 ¢/h.
		recs, _ := st.UsageRecordsOf(ctx, "vm-acme-1")
		var ms int64
		var tampered int64
		for _, rec := range recs {
			if rec.Kind == models.UsageCompute && rec.PeriodStart.Before(t0.Add(time.Hour)) {
				ms += rec.Milliseconds
				tampered = rec.ID
			}
		}
		if want := int64(30*60_000 - 20_333 + 20*60_000 - 7); ms != want {
			t.Errorf("the first hour's compute: %d ms; want %d", ms, want)
		}
		if err := st.DB.Exec("UPDATE usage_records SET cost_micro_cents = cost_micro_cents + 1 WHERE id = ?", tampered).Error; err != nil {
			t.Fatal(err)
		}
		r, err = m.Reconcile(ctx, op, t0, t0.Add(3*time.Hour), "")
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Differences) != 2 {
			t.Fatalf("after the tampering: %v", r.Differences)
		}
		d := r.Differences[0]
		if d.VMID != "vm-acme-1" || d.Kind != models.UsageCompute || !d.Hour.Equal(t0) || !slices.Contains(d.RecordIDs, tampered) ||
			d.RecordsCost != d.EventsCost+1 || d.RecordsMs != d.EventsMs ||
			!strings.Contains(d.String(), strconv.FormatInt(tampered, 10)) {
			t.Errorf("the workload's difference: %+v (%s)", d, d)
		}
		if l := r.Differences[1]; l.VMID != "" || l.OrganizationID != "org-acme" || l.RecordsCost != l.EventsCost+1 {
			t.Errorf("the ledger's difference: %+v (%s)", l, l)
		}
		_, err = m.Reconcile(ctx, op, t0.Add(time.Minute), t0.Add(time.Hour), "")
		refused(t, err, http.StatusBadRequest, "whole UTC hours")
		_, err = m.Reconcile(ctx, datasettest.Caller(t, st, "acme-reader"), t0, t0.Add(time.Hour), "")
		refused(t, err, http.StatusForbidden, "nodes.admin")
	})
}
