package main

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/auth"
	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/services/metering"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// gpugraph billing reconcile prints no difference after a clean run and
// exits 0; a record changed by hand is printed with its id, and the exit
// status is 1.
func TestBillingReconcileCommand(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(string(engine), func(t *testing.T) {
			ctx := context.Background()
			url := storetest.URL(t, engine)
			st, err := store.Open(url)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if err := st.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			datasettest.Load(t, st, datasettest.Base)
			t0 := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
			now := t0
			m := metering.New(st, func() time.Time { return now })
			for i, name := range []models.TransitionName{models.UserStop, models.RestartDeploy, models.AgentRunning} {
				err := st.InTx(ctx, func(tx *store.Txn) error {
					vm, err := st.LockVM(tx, "org-acme", "vm-acme-1")
					if err != nil {
						return err
					}
					_, err = st.Apply(tx, vm, store.Change{Transition: name, Actor: models.Actor{Kind: models.ActorUser}}, t0.Add(time.Duration(i)*time.Minute))
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			now = t0.Add(90 * time.Minute)
			if _, err := m.Pass(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := m.Reconcile(ctx, auth.SystemCaller(), t0, t0.Add(time.Hour), ""); err != nil {
				t.Fatal(err)
			}
			args := []string{"billing", "reconcile", "--from", "2026-12-03T10:00:00Z", "--to", "2026-12-03T12:00:00Z"}
			out := mustAdmin(t, url, args...)
			if !strings.HasPrefix(out, "reconciled 2026-12-03T10:00:00Z to 2026-12-03T12:00:00Z: 1 workloads, ") || !strings.HasSuffix(out, "; 0 differences\n") {
				t.Errorf("a clean run: %q", out)
			}
			var id int64
			if err := st.DB.Raw("SELECT MAX(id) FROM usage_records WHERE vm_id = ? AND kind = ?", "vm-acme-1", models.UsageCompute).Scan(&id).Error; err != nil || id == 0 {
				t.Fatal(id, err)
			}
			if err := st.DB.Exec("UPDATE usage_records SET milliseconds = milliseconds - 1000 WHERE id = ?", id).Error; err != nil {
				t.Fatal(err)
			}
			out, _, err = runAdmin(t, url, args...)
			if !errors.Is(err, errDifferences) || !strings.HasPrefix(out, "vm-acme-1 (org-acme) compute 2026-12-03T1") ||
				!strings.Contains(out, "records "+strconv.FormatInt(id, 10)) || !strings.HasSuffix(out, "; 1 differences\n") {
				t.Errorf("a tampered record: %v\n%s", err, out)
			}
			if _, _, err := runAdmin(t, url, "billing", "reconcile", "--from", "2026-12-03T10:30:00Z", "--to", "2026-12-03T12:00:00Z"); err == nil ||
				!strings.Contains(err.Error(), "whole UTC hours") {
				t.Errorf("a window not on hours: %v", err)
			}
			if _, _, err := runAdmin(t, url, "billing", "reconcile", "--to", "2026-12-03T12:00:00Z"); err == nil || !strings.Contains(err.Error(), "--from") {
				t.Errorf("no --from: %v", err)
			}
		})
	}
}

// --spend-limit-cents-per-hour is RunPod's $80 an hour unless given; 0
// is none, and a negative one stops the start.
func TestSpendLimitFlag(t *testing.T) {
	o, err := parseFlags(nil)
	if err != nil || o.spendLimitCentsPerHour != 8000 {
		t.Errorf("the default: %d %v; want 8000", o.spendLimitCentsPerHour, err)
	}
	if o, err := parseFlags([]string{"--spend-limit-cents-per-hour", "0"}); err != nil || o.spendLimitCentsPerHour != 0 {
		t.Errorf("0: %d %v", o.spendLimitCentsPerHour, err)
	}
	_, err = parseFlags([]string{"--spend-limit-cents-per-hour", "-1"})
	if want := "--spend-limit-cents-per-hour -1: must be 0 (none) or positive"; err == nil || err.Error() != want {
		t.Errorf("-1: %v; want %q", err, want)
	}
}
