package placement

import (
	"reflect"
	"testing"
)

func TestPickGPUs(t *testing.T) {
	shuffled := node("n1")
	shuffled.GPUs[0], shuffled.GPUs[5] = shuffled.GPUs[5], shuffled.GPUs[0]
	mixed := withGPUs(node("n1"), []GPU{
		{ID: "a0", Index: 0, ModelID: a100.ID, Healthy: true},
		{ID: "h1", Index: 1, ModelID: h100.ID, Healthy: true},
		{ID: "a2", Index: 2, ModelID: a100.ID, Healthy: true},
		{ID: "h3", Index: 3, ModelID: h100.ID, Healthy: true},
	})
	tests := []struct {
		name string
		req  *Request
		node *NodeInfo
		want []string
	}{
		{"lowest index first", vmReq(2), node("n1"), []string{"n1-g0", "n1-g1"}},
		{"in index order whatever the slice order", vmReq(2), shuffled, []string{"n1-g0", "n1-g1"}},
		{"skips failed", vmReq(2), fail(node("n1"), 0, 2), []string{"n1-g1", "n1-g3"}},
		{"skips other model", vmReq(2), mixed, []string{"h1", "h3"}},
		{"skips held by others", vmReq(3), hold(node("n1"), "other", 1, 2), []string{"n1-g0", "n1-g3", "n1-g4"}},
		{"keeps own", vmReq(2), hold(hold(node("n1"), "other", 0, 1), "vm-1", 2), []string{"n1-g2", "n1-g3"}},
		{"too few", vmReq(3), hold(node("n1"), "other", 0, 1, 2, 3, 4, 5), nil},
		{"none needed", vmReq(0), node("n1"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := PickGPUs(tt.req, tt.node); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("PickGPUs = %v, want %v", got, tt.want)
			}
		})
	}
}
