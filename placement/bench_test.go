package placement

import (
	"fmt"
	"testing"
)

// BenchmarkPlace places a 2-GPU VM among 1,000 nodes of 8 GPUs each, where
// most nodes are rejected and the rest must be scored.
func BenchmarkPlace(b *testing.B) {
	nodes := make([]*NodeInfo, 1000)
	for i := range nodes {
		n := node(fmt.Sprintf("gpu-node-%04d", i))
		switch i % 4 {
		case 0:
			n.State = NodeStateOffline
		case 1:
			hold(n, "other", 0, 1, 2, 3, 4, 5, 6)
		case 2:
			hold(n, "other", 0, 1, 2)
			n.Holdings = []Holding{{VMID: "other", CPUCores: 48, RAMGb: 384, DiskGb: 1500}}
		}
		nodes[i] = n
	}
	f := Default()
	req := vmReq(2)
	b.ReportAllocs()
	for b.Loop() {
		if _, st := f.Place(req, nodes); st != nil {
			b.Fatal(st)
		}
	}
}
