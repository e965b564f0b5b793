package nodes

import (
	"context"
	"go/build"
	"slices"
	"strings"
	"testing"

	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/auth"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/services/nodeid"
	"gpugraph/models"
)

// Who may report: a node credential; an API key only in legacy mode, and
// only with nodes.report. Answered before anything of the report is read.
func TestWhoMayReport(t *testing.T) {
	key := auth.SystemCaller() // holds nodes.report
	strict, legacy := New(nil, nil, nil, Options{}), New(nil, nil, nil, Options{KeysAccepted: true})
	for _, tc := range []struct {
		name   string
		svc    *Service
		who    Reporter
		status int
		code   string
	}{
		{"no credential and no key", strict, Reporter{}, 401, CodeNodeCredentialRequired},
		{"an API key holding nodes.report", strict, Reporter{Caller: key}, 403, CodeNodeCredentialRequired},
		{"legacy mode, no key", legacy, Reporter{}, 401, apierr.Unauthenticated},
		{"legacy mode, a key without nodes.report", legacy, Reporter{Caller: &auth.Caller{}}, 403, apierr.Forbidden},
	} {
		for name, report := range map[string]func() error{
			"inventory": func() error {
				_, err := tc.svc.ReportInventory(context.Background(), tc.who, agentapi.InventoryRequest{})
				return err
			},
			"heartbeat": func() error {
				_, err := tc.svc.ReportHeartbeat(context.Background(), tc.who, agentapi.HeartbeatRequest{})
				return err
			},
			"identify": func() error {
				_, err := tc.svc.Identify(context.Background(), "", tc.who.Caller, nil)
				return err
			},
		} {
			if e, ok := apierr.As(report()); !ok || e.Status != tc.status || e.Code != tc.code {
				t.Errorf("%s, %s: got %d %s %q, want %d %s", tc.name, name, e.Status, e.Code, e.Message, tc.status, tc.code)
			}
		}
	}
	if err := legacy.MayReport(Reporter{Caller: key}); err != nil {
		t.Errorf("legacy mode, a key holding nodes.report: %v", err)
	}
	if err := strict.MayReport(Reporter{Node: &nodeid.Identity{NodeName: "n"}}); err != nil {
		t.Errorf("a node credential: %v", err)
	}
	// In legacy mode a refused key answers its own refusal, as on every
	// path that takes keys; otherwise the credential is what is missing.
	unknown := apierr.Unauthorized("unknown API key")
	if _, err := legacy.Identify(context.Background(), "gpgkey_x", nil, unknown); err != unknown {
		t.Errorf("legacy mode, a refused key: got %v, want the key's refusal", err)
	}
	_, err := strict.Identify(context.Background(), "gpgkey_x", nil, unknown)
	if e, ok := apierr.As(err); !ok || e.Status != 401 || e.Code != CodeNodeCredentialRequired {
		t.Errorf("a refused key: got %v, want a 401 %s", err, CodeNodeCredentialRequired)
	}
}

func TestInventoryChecks(t *testing.T) {
	gpu := func(i int, uuid string) agentapi.InventoryGPU {
		return agentapi.InventoryGPU{Index: i, UUID: uuid, Address: "0000:3B:00.0", Health: "healthy"}
	}
	ok := agentapi.InventoryRequest{NodeName: "node-1", AgentVersion: "2.6.1", GPUs: []agentapi.InventoryGPU{gpu(0, "GPU-a"), gpu(1, "GPU-b")}}
	inv, err := checkInventory(ok)
	if err != nil || len(inv.GPUs) != 2 || inv.GPUs[1].Health != models.GPUHealthy {
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
		_, err := checkInventory(r)
		if e, ok := apierr.As(err); !ok || e.Code != apierr.BadRequestCode || !strings.Contains(e.Message, tc.want) {
			t.Errorf("got %v, want a 400 saying %q", err, tc.want)
		}
	}
}

func TestFailedReasonOnlyWhenFailed(t *testing.T) {
	hb, err := checkHeartbeat(agentapi.HeartbeatRequest{NodeName: "node-1", GPUs: []agentapi.HeartbeatGPU{
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
