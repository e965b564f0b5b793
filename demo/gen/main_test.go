package main

import (
	"bytes"
	"os"
	"testing"
)

// TestDemoJSONIsUpToDate fails when the generator was changed without
// running go generate ./demo (or when its output stopped being
// deterministic).
func TestDemoJSONIsUpToDate(t *testing.T) {
	want, err := os.ReadFile("../demo.json")
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		got, err := generate()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatal("demo/demo.json differs from the generator's output; run: go generate ./demo")
		}
	}
}

// TestValidateCatches makes sure the generator's own checks bite.
func TestValidateCatches(t *testing.T) {
	for name, breakIt := range map[string]func(*Fixture){
		"gpu held twice": func(f *Fixture) {
			for _, v := range f.VMs {
				if len(v.GPUIDs) > 0 && v.ID != f.VMs[0].ID {
					v.GPUIDs[0] = f.VMs[0].GPUIDs[0]
					return
				}
			}
		},
		"stopped VM holding GPUs": func(f *Fixture) {
			for _, v := range f.VMs {
				if v.Status == "stopped" {
					v.GPUIDs = []string{f.Nodes[0].GPUs[7].ID}
					return
				}
			}
		},
		"RAM over capacity":       func(f *Fixture) { f.VMs[0].RAMGb = 1 << 20 },
		"pod of unknown workload": func(f *Fixture) { f.Pods[0].WorkloadID = "nope" },
		"pod on a node of another cluster": func(f *Fixture) {
			for _, p := range f.Pods {
				if p.NodeName != nil && p.ClusterID == clusterWest {
					p.NodeName = new("dgx-h100-01")
					return
				}
			}
		},
	} {
		f := build()
		if err := validate(f); err != nil {
			t.Fatalf("fresh build: %v", err)
		}
		breakIt(f)
		if validate(f) == nil {
			t.Errorf("%s: not caught", name)
		}
	}
}
