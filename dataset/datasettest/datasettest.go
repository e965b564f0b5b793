// Package datasettest holds the fixture every package's tests share, and
// loads it into a store: it speaks no HTTP, so the store's and the
// services' tests use it without an HTTP test server (httpapi/servertest
// hands the same fixture to the faces' tests).
package datasettest

import (
	"context"
	_ "embed"
	"testing"

	"gpugraph/dataset"
	"gpugraph/store"
	"gpugraph/store/storetest"
)

// Base is a small fixture every package's tests share: two organizations
// (org-acme, tenant 1001, InfiniBand; org-globex, tenant 1002), keys per
// permission set (acme-operator, acme-reader, acme-workloads, acme-metrics,
// acme-agent, globex-operator), node n1 (8 H100, GPU 7 failed, on fabric
// ib-1) and n2 (offline, 4 MI300X), VMs and pods of both organizations on n1,
// Run:ai projects, workloads, a revision and pods of both tenants.
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

// Each runs fn on every engine (storetest.Each), each with a fresh
// database holding Base.
func Each(t *testing.T, fn func(t *testing.T, st *store.Store)) {
	t.Helper()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		Load(t, st, Base)
		fn(t, st)
	})
}
