package bench

import (
	"context"
	"os"
	"strings"
	"testing"

	"gpugraph/internal/store/storetest"
)

// A whole run at a small size, figure 10 aside: every figure answers a number or says its
// feature is missing; none fails, and every target a figure checks that
// does not depend on speed is met.
func TestRunSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("a whole run")
	}
	cfg := Defaults()
	cfg.Engines = storetest.Engines()
	cfg.PostgresURL = os.Getenv("TEST_DATABASE_URL")
	cfg.FleetNodes, cfg.FleetPods, cfg.Tenants = 80, 2400, 4
	cfg.BigPods, cfg.SQLiteBigPods = 5000, 5000
	cfg.Samples = 100 * 1200
	cfg.RestartNodes, cfg.VMsPerNode = 30, 5
	cfg.LoadRequests, cfg.LatencyRuns = 64, 3
	cfg.LiveSubscribers, cfg.LiveEvents = 50, 20
	cfg.QueuePending, cfg.QueueSamples = 200, 5
	cfg.MeteringWorkloads, cfg.MeteringOrgs, cfg.MeteringPasses = 500, 50, 3
	cfg.HeartbeatNodes, cfg.HeartbeatClients, cfg.HeartbeatRequests = 50, 8, 200
	// Figure 10 runs the built binaries against a kube-apiserver: a run of
	// benchreport measures it, not this test.
	cfg.Figures = map[int]bool{}
	for f := 1; f <= HeartbeatFigure; f++ {
		cfg.Figures[f] = f != ClusterFigure
	}
	rep := Run(context.Background(), cfg)
	if len(rep.Rows()) != 30 {
		t.Fatalf("%d rows", len(rep.Rows()))
	}
	for _, r := range rep.Rows() {
		for _, e := range cfg.Engines {
			v := r.Value[e]
			if v == "" || strings.HasPrefix(v, "error") {
				t.Errorf("figure %d %q on %s: %q", r.Figure, r.Label, e, v)
			}
			if (r.Figure == 5 && r.Label == rowInvariant) || r.Figure == 2 && r.Label == rowStmts500 {
				if r.Met[e] != "yes" {
					t.Errorf("figure %d %q on %s: %q", r.Figure, r.Label, e, v)
				}
			}
		}
	}
}
