package placement

import (
	"reflect"
	"testing"
)

func TestCheckRunning(t *testing.T) {
	tests := []struct {
		name string
		req  *Request
		node *NodeInfo
		want *Status
	}{
		{"all healthy", vmReq(2), hold(node("n1"), "vm-1", 0, 1), nil},
		{"failed GPU of someone else", vmReq(2), fail(hold(hold(node("n1"), "vm-1", 0, 1), "other", 2), 2), nil},
		{"failed, enough healthy to restart", vmReq(2), fail(hold(node("n1"), "vm-1", 0, 1), 1), &Status{
			Filter: "CheckRunning", Code: NodeBusy, Reason: "failed GPU",
			Message: "the VM holds failed GPU 0000:28:00.0 (XID 79) on node n1; " +
				"stopping it and starting it again would place it on healthy GPUs of its node"}},
		{"failed, too few healthy", podReq(h100, 2), fail(hold(hold(node("n1"), "pod-1", 0, 1), "other", 2, 3, 4, 5, 6, 7), 0, 1), &Status{
			Filter: "CheckRunning", Code: NodeBusy, Reason: "failed GPU",
			Message: "the pod holds failed GPUs 0000:18:00.0 (XID 79), 0000:28:00.0 (XID 79) on node n1; " +
				"the node has 0 healthy NVIDIA H100 GPUs free or its own, 2 needed"}},
		{"failed, one healthy own and one free", vmReq(4), fail(hold(hold(node("n1"), "vm-1", 0, 1, 2, 3), "other", 4, 5, 6), 2, 3), &Status{
			Filter: "CheckRunning", Code: NodeBusy, Reason: "failed GPU",
			Message: "the VM holds failed GPUs 0000:38:00.0 (XID 79), 0000:48:00.0 (XID 79) on node n1; " +
				"the node has 3 healthy NVIDIA H100 GPUs free or its own, 4 needed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CheckRunning(tt.req, tt.node); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("CheckRunning:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}
