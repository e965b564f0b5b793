package abuse

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gpugraph/bench"
	"gpugraph/internal/dataset"
	"gpugraph/internal/store"
)

func TestCells(t *testing.T) {
	a := &Attack{No: 7, Issue: 23, Finding: 5, Name: "slow bodies", Want: "victim served"}
	r := &Result{Attack: a, OK: true, CPU: 2500 * time.Microsecond, Memory: 1_500_000, Requests: 100, InFlight: 100, measured: true,
		Victim: &Victim{Baseline: Latencies{OK: []time.Duration{2 * time.Millisecond, 4 * time.Millisecond}},
			During: Latencies{OK: []time.Duration{3 * time.Millisecond, 10 * time.Millisecond}, Errors: 2}}}
	r.Statuses.AddN("open", 100)
	want := []string{"7", "23: 5", "slow bodies", "open×100", "victim served", "0.003 s", "+1.5 MB (100 at once)",
		"4.0 ms / 4.0 ms → 10.0 ms / 10.0 ms (×2.50), 2 errors", "FAIL: victim errors, victim p99"}
	if got := r.Cells(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("cells:\n%q\nwant\n%q", got, want)
	}
	kept := int64(300_000_000)
	r = &Result{Attack: a, OK: true, CPU: 12 * time.Second, Memory: 2e6, Requests: 1, InFlight: 1, Lower: true, Retained: &kept, Outcome: "3 leaked", measured: true}
	r.Statuses.Add("400")
	got := r.Cells()
	if got[3] != "400×1; 3 leaked" || got[5] != "≥ 12.0 s" || got[6] != "≥ +2.0 MB (1 at once); heap kept +300.0 MB after all" || got[7] != "—" || got[8] != "FAIL: CPU, heap" {
		t.Errorf("lower bounds and heap: %q", got)
	}
	r = &Result{Attack: a, OK: true, measured: true, Victim: &Victim{Baseline: Latencies{OK: []time.Duration{2 * time.Millisecond}}, During: Latencies{Errors: 40}}}
	if got := r.Cells(); got[7] != "2.0 ms / 2.0 ms → none answered, 40 errors" {
		t.Errorf("a victim never answered: %q", got[7])
	}
	r = &Result{Attack: a, Err: errors.New("no server")}
	if got := r.Cells(); got[3] != "error: no server" || got[5] != "—" || got[8] != "FAIL: error" {
		t.Errorf("an attack that did not run: %q", got)
	}
}

func TestWriteMarkdown(t *testing.T) {
	path := filepath.Join(t.TempDir(), "BENCHMARKS.md")
	if err := os.WriteFile(path, []byte("# Benchmarks\n\nkept\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a := Attacks()[0]
	r := &Result{Attack: a, Engine: store.SQLite}
	r.Statuses.Add("401")
	rep := &Report{Engines: []store.Dialect{store.SQLite}, Results: map[store.Dialect][]*Result{store.SQLite: {r}},
		Started: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), Took: 3 * time.Minute}
	if err := rep.WriteMarkdown(path, Defaults()); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	s := string(b)
	for _, want := range []string{"# Benchmarks\n\nkept\n\n" + SectionBegin + "\nMeasured 2026-12-01 with `make abuse`", "3m0s in all: 1 of 1 results outside their bounds",
		"\nSQLite:\n\n| # | issue: finding | attack | answered | want |", "| 1 | 23: 1 | forged access token", "| FAIL: outcome |\n" + SectionEnd + "\n"} {
		if !strings.Contains(s, want) {
			t.Errorf("the file lacks %q:\n%s", want, s)
		}
	}
	if rep.Failed() != 1 {
		t.Errorf("Failed = %d, want 1", rep.Failed())
	}
}

// TestFixtureLoads loads the attacks' fixture into a fresh SQLite
// database: every reference holds, and the ids the attacks aim at are in
// it as they expect.
func TestFixtureLoads(t *testing.T) {
	ctx := context.Background()
	db, err := bench.FreshDB(ctx, store.SQLite, "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Drop()
	fx := newFixture()
	if _, err := dataset.Load(ctx, db.Store, fx.file); err != nil {
		t.Fatal(err)
	}
	running := map[string]string{}
	for _, v := range fx.file.VMs {
		if v.Status == "running" {
			running[v.ID] = v.OrganizationID
		}
	}
	if running[fx.victimVM] != fx.victimOrg || running[fx.sharedVM] != fx.victimOrg || running[fx.attackerVM] != fx.attackerOrg || len(running) != 3 {
		t.Errorf("running VMs: %v", running)
	}
	if fx.metricsPod.TenantID != fx.attackerTenant || fx.victimPodCount == 0 || len(fx.attackerPods) == 0 {
		t.Errorf("pods: metrics pod of tenant %d, %d victim pods, %d attacker pods", fx.metricsPod.TenantID, fx.victimPodCount, len(fx.attackerPods))
	}
	if got := len(fx.file.PodMetrics); got != 2*fx.metricsGPUs+2 {
		t.Errorf("%d series on the metrics pod, want %d", got, 2*fx.metricsGPUs+2)
	}
}
