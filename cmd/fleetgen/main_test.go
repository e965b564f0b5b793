package main

import (
	"os"
	"path/filepath"
	"testing"

	"gpugraph/bench/fleetgen"
	"gpugraph/internal/dataset"
)

func TestWritesTheFixture(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fleet.json")
	o := fleetgen.Options{Nodes: 12, Pods: 90, Samples: 300, Tenants: 2, Seed: 4, VMGPUs: 2}
	if err := write(path, o); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := dataset.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Nodes) != 12 || len(f.Nodes[11].GPUs) != 8 || len(f.Pods) != 90 || len(f.APIKeys) != 2 || f.APIKeys[1].Token != "fleet-001" {
		t.Fatalf("nodes %d, pods %d, keys %+v", len(f.Nodes), len(f.Pods), f.APIKeys)
	}
}
