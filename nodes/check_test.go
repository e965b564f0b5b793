package nodes

import (
	"context"
	"go/build"
	"slices"
	"strings"
	"testing"

	"gpugraph/agentapi"
	"gpugraph/apierr"
	"gpugraph/models"
)

func TestReportsNeedNodesReport(t *testing.T) {
	for name, report := range map[string]func() error{
		"inventory": func() error {
			_, err := ReportInventory(context.Background(), nil, Reporter{}, agentapi.InventoryRequest{})
			return err
		},
		"heartbeat": func() error {
			_, err := ReportHeartbeat(context.Background(), nil, Reporter{}, agentapi.HeartbeatRequest{})
			return err
		},
	} {
		if e, ok := apierr.As(report()); !ok || e.Code != apierr.Forbidden {
			t.Errorf("%s without nodes.report: got %v, want a 403", name, e)
		}
	}
}

func TestInventoryChecks(t *testing.T) {
	gpu := func(i int, uuid string) agentapi.InventoryGPU {
		return agentapi.InventoryGPU{Index: i, UUID: uuid, Address: "0000:3B:00.0", Health: "healthy"}
	}
	ok := agentapi.InventoryRequest{NodeName: "node-1", AgentVersion: "2.6.1", GPUs: []agentapi.InventoryGPU{gpu(0, "GPU-a"), gpu(1, "GPU-b")}}
	inv, err := inventoryToStore(ok)
	if err != nil || len(inv.GPUs) != 2 || inv.GPUs[1].Health != models.GpuHealthy {
		t.Fatalf("a good inventory: got %+v, %v", inv, err)
	}

	bad := []struct {
		edit func(*agentapi.InventoryRequest)
		want string
	}{
		{func(r *agentapi.InventoryRequest) { r.NodeName = "" }, "nodeName is missing"},
		{func(r *agentapi.InventoryRequest) { r.NodeName = "node 1" }, "without spaces"},
		{func(r *agentapi.InventoryRequest) { r.AgentVersion = "" }, "agentVersion is missing"},
		{func(r *agentapi.InventoryRequest) { r.AgentVersion = "two" }, "not a semantic version"},
		{func(r *agentapi.InventoryRequest) { r.RAMGb = -1 }, "must not be negative"},
		{func(r *agentapi.InventoryRequest) { r.GPUs[1].UUID = "GPU-a" }, "gpus[1].uuid GPU-a is also the uuid of gpus[0]"},
		{func(r *agentapi.InventoryRequest) { r.GPUs[1].Index = 0 }, "gpus[1].index 0 is also the index of gpus[0]"},
		{func(r *agentapi.InventoryRequest) { r.GPUs[0].Address = "3b:00.0" }, "not a PCI bus id"},
		{func(r *agentapi.InventoryRequest) { r.GPUs[0].Health = "sick" }, `gpus[0].health "sick" is not healthy or failed`},
	}
	for _, tc := range bad {
		r := ok
		r.GPUs = slices.Clone(ok.GPUs)
		tc.edit(&r)
		_, err := inventoryToStore(r)
		if e, ok := apierr.As(err); !ok || e.Code != apierr.BadRequestCode || !strings.Contains(e.Message, tc.want) {
			t.Errorf("got %v, want a 400 saying %q", err, tc.want)
		}
	}
}

func TestFailedReasonOnlyWhenFailed(t *testing.T) {
	hb, err := heartbeatToStore(agentapi.HeartbeatRequest{NodeName: "node-1", GPUs: []agentapi.HeartbeatGPU{
		{UUID: "GPU-a", Health: "healthy", FailedReason: "stale"},
		{UUID: "GPU-b", Health: "failed", FailedReason: "XID 79"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if hb.GPUs[0].FailedReason != "" || hb.GPUs[1].FailedReason != "XID 79" {
		t.Errorf("got reasons %q and %q, want one only on the failed GPU", hb.GPUs[0].FailedReason, hb.GPUs[1].FailedReason)
	}
}

// TestSpeaksNoHTTP keeps the service free of HTTP: statuses belong to
// apierr and the faces.
func TestSpeaksNoHTTP(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		if strings.HasPrefix(imp, "net/http") {
			t.Errorf("package nodes imports %s", imp)
		}
	}
}
