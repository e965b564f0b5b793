package placement

import (
	"fmt"
	"testing"
)

// placeRepeatedly places copies of req on n, one after another, through
// the filters, claiming each placement's GPUs and host share, and answers
// how many fit: what Fits must agree with.
func placeRepeatedly(fw *Framework, req Request, n *NodeInfo) int {
	for i := 0; ; i++ {
		r := req
		r.VMID = fmt.Sprintf("copy-%d", i)
		p, st := fw.Place(&r, []*NodeInfo{n})
		if st != nil {
			return i
		}
		for j := range n.GPUs {
			for _, id := range p.GPUIDs {
				if n.GPUs[j].ID == id {
					n.GPUs[j].HolderID = r.VMID
				}
			}
		}
		if !r.Pod {
			n.Holdings = append(n.Holdings, Holding{VMID: r.VMID, CPUCores: r.CPUCores, RAMGb: r.RAMGb, DiskGb: r.DiskGb})
		}
		if p.InfiniBand {
			n.Fabric.Holders = append(n.Fabric.Holders, r.VMID)
		}
	}
}

func TestFitsAgreesWithPlacingOneByOne(t *testing.T) {
	fw := Default()
	cases := []struct {
		name string
		req  Request
		node func() *NodeInfo
		want int
	}{
		{"1 GPU on an empty node", *vmReq(1), func() *NodeInfo { return node("a") }, 8},
		{"2 GPUs, one failed, two held", *vmReq(2), func() *NodeInfo { return fail(hold(node("a"), "x", 0, 1), 5) }, 2},
		{"8 GPUs, one held", *vmReq(8), func() *NodeInfo { return hold(node("a"), "x", 3) }, 0},
		{"RAM bounds it", Request{GPUModel: h100, GPUCount: 1, CPUCores: 8, RAMGb: 700, DiskGb: 10}, func() *NodeInfo { return node("a") }, 2},
		{"RAM taken by others", *vmReq(1), func() *NodeInfo {
			n := node("a")
			n.Holdings = []Holding{{VMID: "x", CPUCores: 100, RAMGb: 100, DiskGb: 100}}
			return n
		}, 1},
		{"over-committed node", *vmReq(1), func() *NodeInfo {
			n := node("a")
			n.Holdings = []Holding{{VMID: "x", CPUCores: 200}}
			return n
		}, 0},
		{"CPU only", Request{CPUCores: 16, RAMGb: 64, DiskGb: 500}, func() *NodeInfo { return node("a") }, 8},
		{"another model", Request{GPUModel: a100, GPUCount: 1, CPUCores: 1}, func() *NodeInfo { return node("a") }, 0},
		{"offline", *vmReq(1), func() *NodeInfo { n := node("a"); n.State = NodeStateOffline; return n }, 0},
		{"pod bounded by the fabric", *podReq(h100, 1), func() *NodeInfo {
			n := node("a")
			n.Fabric = &Fabric{ID: "ib", IPCapacity: 3, Holders: []string{"other"}}
			return n
		}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := c.req
			if got := fw.Fits(&req, c.node()); got != c.want {
				t.Errorf("Fits = %d, want %d", got, c.want)
			}
			if got := placeRepeatedly(fw, req, c.node()); got != c.want {
				t.Errorf("placed one by one: %d, want %d", got, c.want)
			}
		})
	}
}
