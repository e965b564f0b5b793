package demo

import (
	"fmt"
	"testing"
)

// The demo's catalog sells 1, 2, 4 and 8 GPUs of every model its fleet
// has, each with its GPUs' share of the CPU, RAM and disk of that model's
// servers (the 8x type is the whole server), at the per-GPU price of the
// demo's VMs of that model, and nothing the fleet cannot hold.
func TestInstanceTypesMatchFleet(t *testing.T) {
	f := load(t, fixture)
	type shape struct{ gpus, cpu, ram, disk int }
	servers := map[string]shape{}
	for _, n := range f.Nodes {
		if len(n.GPUs) == 0 {
			continue
		}
		s := shape{len(n.GPUs), n.CPUCores, n.RAMGb, n.DiskGb}
		m := n.GPUs[0].ModelID
		if prev, ok := servers[m]; ok && prev != s {
			t.Fatalf("model %s is in servers of two shapes: %+v and %+v", m, prev, s)
		}
		servers[m] = s
	}
	price := map[string]int{}
	for _, v := range f.VMs {
		if v.GPUModelID != nil && v.GPUCount > 0 {
			price[*v.GPUModelID] = v.PricePerHourCents / v.GPUCount
		}
	}
	seen := map[string]bool{}
	for _, it := range f.InstanceTypes {
		if p := it.Problem(); p != "" {
			t.Errorf("%s: %s", it.Name, p)
			continue
		}
		if it.GPUModelID == nil {
			t.Errorf("%s: a CPU-only type, which the demo does not sell", it.Name)
			continue
		}
		m := *it.GPUModelID
		s, ok := servers[m]
		if !ok {
			t.Errorf("%s: no server of the fleet has %s GPUs", it.Name, m)
			continue
		}
		n := it.GPUCount
		want := shape{n, s.cpu * n / s.gpus, s.ram * n / s.gpus, s.disk * n / s.gpus}
		if got := (shape{it.GPUCount, it.CPUCores, it.RAMGb, it.DiskSizeGb}); got != want {
			t.Errorf("%s: %+v, want its GPUs' share %+v", it.Name, got, want)
		}
		if it.PricePerHourCents != price[m]*n || it.VolumeGb != 250*n {
			t.Errorf("%s: %d cents, %d GB volume; want %d and %d", it.Name, it.PricePerHourCents, it.VolumeGb, price[m]*n, 250*n)
		}
		seen[fmt.Sprintf("%s/%d", m, n)] = true
	}
	for m := range servers {
		for _, n := range []int{1, 2, 4, 8} {
			if !seen[fmt.Sprintf("%s/%d", m, n)] {
				t.Errorf("no %dx type of %s", n, m)
			}
		}
	}
	if len(f.InstanceTypes) != 4*len(servers) {
		t.Errorf("%d types for %d models", len(f.InstanceTypes), len(servers))
	}
}
