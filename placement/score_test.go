package placement

import "testing"

func TestMostAllocated(t *testing.T) {
	tests := []struct {
		name string
		req  *Request
		node *NodeInfo
		want Score
	}{
		// 2 held + 2 asked of 8; (16+16)/128 CPU and (128+128)/2048 RAM.
		{"VM on a half-empty node", vmReq(2),
			holding(hold(node("n1"), "other", 0, 1), Holding{VMID: "other", CPUCores: 16, RAMGb: 128}),
			Score{GPU: 0.5, Host: (0.25 + 0.125) / 2}},
		// Failed GPUs are not capacity: 3 held + 1 asked of 4 healthy.
		{"failed GPUs left out", vmReq(1), fail(hold(node("n1"), "other", 0, 1, 2), 4, 5, 6, 7),
			Score{GPU: 1, Host: (16.0/128 + 128.0/2048) / 2}},
		// The requester's own GPUs and holdings are not "others".
		{"own holdings ignored", vmReq(2), holding(hold(node("n1"), "vm-1", 0, 1), Holding{VMID: "vm-1", CPUCores: 64, RAMGb: 1024}),
			Score{GPU: 0.25, Host: (16.0/128 + 128.0/2048) / 2}},
		// Pods hold no CPU or RAM: only what VMs hold counts.
		{"pod", podReq(h100, 4), holding(node("n1"), Holding{VMID: "other", CPUCores: 32, RAMGb: 512}),
			Score{GPU: 0.5, Host: 0.25}},
		{"no capacity figures", vmReq(0), &NodeInfo{Name: "bare"}, Score{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MostAllocated(tt.req, tt.node); got != tt.want {
				t.Errorf("MostAllocated = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestScoreLess(t *testing.T) {
	if !(Score{GPU: 0.5, Host: 0.9}).Less(Score{GPU: 0.75}) {
		t.Error("GPU packing must decide before host packing")
	}
	if !(Score{GPU: 0.5, Host: 0.1}).Less(Score{GPU: 0.5, Host: 0.2}) {
		t.Error("host packing must break GPU ties")
	}
	if (Score{GPU: 0.5, Host: 0.2}).Less(Score{GPU: 0.5, Host: 0.2}) {
		t.Error("equal scores are not less")
	}
}
