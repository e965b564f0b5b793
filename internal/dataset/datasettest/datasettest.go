// Package datasettest holds the fixture every package's tests share, and
// loads it into a store: it speaks no HTTP, so the store's and the
// services' tests use it without an HTTP test server (internal/httpapi/servertest
// hands the same fixture to the faces' tests).
package datasettest

import (
	"context"
	_ "embed"
	"testing"

	"gpugraph/bench/fleetgen"
	"gpugraph/internal/auth"
	"gpugraph/internal/dataset"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// Base is a small fixture every package's tests share: two organizations
// (org-acme, tenant 1001, InfiniBand; org-globex, tenant 1002), keys per
// permission set (acme-operator, acme-reader, acme-workloads, acme-metrics,
// acme-agent, globex-operator), node n1 (8 H100, GPU 7 failed, on fabric
// ib-1) and n2 (offline, 4 MI300X), VMs and pods of both organizations on n1,
// Run:ai projects, workloads, a revision and pods of both tenants, and five
// instance types (cpu_16c_64gb, gpu_1x/2x/8x_h100_sxm5, gpu_4x_mi300x).
//
//go:embed testdata/base.json
var Base string

// Load loads fixture (a JSON document) into st, failing t when it does not load.
func Load(t testing.TB, st *store.Store, fixture string) {
	t.Helper()
	if _, err := dataset.LoadFile(context.Background(), st, []byte(fixture)); err != nil {
		t.Fatalf("load fixture: %v", err)
	}
}

// BusyFleet is the fleet the services' benchmarks measure at scale:
// 1,000 nodes of 8 GPUs (8,000 GPUs) with two VMs of 2 GPUs on each
// (bench/fleetgen's), the first of them running and holding its GPUs and
// host share, the second stopped.
func BusyFleet() *dataset.File {
	f := fleetgen.Generate(fleetgen.Options{Nodes: 1000, VMsPerNode: 2, VMGPUs: 2})
	for i := range f.VMs {
		if i%2 == 0 {
			v := &f.VMs[i]
			v.Status, v.GPUIDs = models.VMRunning, []string{*v.NodeID + "-g0", *v.NodeID + "-g1"}
		}
	}
	return f
}

// Each runs fn on every engine (storetest.Each), each with a fresh
// database holding Base.
func Each(t *testing.T, fn func(t *testing.T, st *store.Store)) {
	t.Helper()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		Load(t, st, Base)
		fn(t, st)
	})
}

// Caller is the caller the API key token of the fixture is (auth's own
// lookup, as a request's): acme-operator, acme-reader, globex-operator, ….
func Caller(t testing.TB, st *store.Store, token string) *auth.Caller {
	t.Helper()
	a := &auth.Authenticator{Store: st}
	c, err := a.Lookup(context.Background(), token)
	if err != nil {
		t.Fatalf("look up %s: %v", token, err)
	}
	a.WaitUsage()
	return c
}

// WantError fails t unless err is the apierr.Error of status and code
// with message msg ("" takes any message).
func WantError(t testing.TB, err error, status int, code, msg string) {
	t.Helper()
	e, ok := apierr.As(err)
	if !ok {
		t.Fatalf("error %v, want the %d %s %q", err, status, code, msg)
	}
	if e.Status != status || e.Code != code || (msg != "" && e.Message != msg) {
		t.Fatalf("error %d %s %q, want %d %s %q", e.Status, e.Code, e.Message, status, code, msg)
	}
}
