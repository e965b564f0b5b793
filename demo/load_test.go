package demo

import (
	"context"
	"testing"
	"time"

	"gpugraph/internal/dataset"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// TestLoadsIntoStore loads the demo as the server does at start, on every
// engine of the suite.
func TestLoadsIntoStore(t *testing.T) {
	b, err := JSON(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	f := load(t, b)
	held := 0
	for _, v := range f.VMs {
		held += len(v.GPUIDs)
	}
	samples := 0
	for _, s := range f.PodMetrics {
		samples += len(s.Samples)
	}
	for _, h := range f.PodHistograms {
		samples += len(h.Samples)
	}
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		stats, err := dataset.LoadFile(ctx, st, b)
		if err != nil {
			t.Fatalf("load: %v", err)
		}
		if stats.Nodes != len(f.Nodes) || stats.VMs != len(f.VMs) || stats.Pods != len(f.Pods) || stats.Samples != samples {
			t.Errorf("loaded %+v", stats)
		}
		n := storetest.Count(t, st, "gpus", "holder_vm_id IS NOT NULL")
		if int(n) != held {
			t.Errorf("%d GPUs held after the load, the file lists %d", n, held)
		}
		// Loading again replaces the rows: the server may load the demo
		// into a database that already holds it.
		if _, err := dataset.LoadFile(ctx, st, b); err != nil {
			t.Fatalf("load again: %v", err)
		}
	})
}
