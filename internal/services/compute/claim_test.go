package compute

import (
	"context"
	"errors"
	"testing"

	"gpugraph/internal/dataset"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
	"gpugraph/placement"
)

const claimFixture = `{
 "gpuModels": [{"id": "h100", "name": "NVIDIA H100", "manufacturer": "NVIDIA"}],
 "nodes": [{"id": "n1", "name": "gpu-node-1", "status": "online", "agentVersion": "2.6.1", "cpuCores": 64, "ramGb": 512, "diskGb": 4000,
            "gpus": [{"id": "g0", "index": 0, "uuid": "GPU-0", "address": "0000:18:00.0", "modelId": "h100", "health": "healthy"},
                     {"id": "g1", "index": 1, "uuid": "GPU-1", "address": "0000:2A:00.0", "modelId": "h100", "health": "healthy"},
                     {"id": "g2", "index": 2, "uuid": "GPU-2", "address": "0000:3A:00.0", "modelId": "h100", "health": "failed", "failedReason": "XID 79"}]}],
 "organizations": [{"id": "org", "name": "Org", "tenantId": 1}],
 "vms": [{"id": "other", "name": "other", "organizationId": "org", "nodeId": "n1", "status": "running", "gpuModelId": "h100", "gpuCount": 1, "gpuIds": ["g0"]},
         {"id": "me", "name": "me", "organizationId": "org", "nodeId": "n1", "status": "stopped", "gpuModelId": "h100", "gpuCount": 1}]
}`

// The claim is the last line of defence: whatever a snapshot said, a GPU
// that someone else holds, that failed, or that is on another node is never
// taken, and the whole transaction rolls back instead.
func TestClaimRefusesWhatTheRowsRefuse(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		if _, err := dataset.LoadFile(ctx, st, []byte(claimFixture)); err != nil {
			t.Fatal(err)
		}
		claim := func(ids ...string) error {
			return st.InTx(ctx, func(tx *store.Txn) error {
				r := &restart{st: st, tx: tx, fw: placement.Default(),
					vm: &models.VM{ID: "me"}, model: &models.GPUModel{ID: "h100"}}
				return r.claimGPUs("n1", ids)
			})
		}
		for _, ids := range [][]string{{"g0"}, {"g1", "g0"}, {"g2"}, {"g1", "nope"}} {
			if err := claim(ids...); !errors.Is(err, errMoved) {
				t.Errorf("claim %v: err = %v, want errMoved", ids, err)
			}
		}
		holder := func(id string) string {
			gpus, err := st.GPUsByNodeIDs(ctx, []string{"n1"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range gpus {
				if g.ID == id && g.HolderVMID != nil {
					return *g.HolderVMID
				}
			}
			return ""
		}
		if holder("g0") != "other" || holder("g1") != "" || holder("g2") != "" {
			t.Fatalf("a refused claim changed holders: g0=%q g1=%q g2=%q", holder("g0"), holder("g1"), holder("g2"))
		}
		if err := claim("g1"); err != nil {
			t.Fatalf("claim g1: %v", err)
		}
		if holder("g1") != "me" {
			t.Fatalf("g1 held by %q", holder("g1"))
		}
	})
}

// Every 503 restartVm answers carries a Retry-After: placement's refusals
// and the answer of a restart that kept losing its node to others.
func TestRetryAfterOnEvery503(t *testing.T) {
	for _, err := range []error{
		busy(&models.VM{ID: "p", CapabilityTier: "pod"}),
		busy(nil),
		Refusal(&placement.Status{Code: placement.NoCapacity, Message: "0/1 nodes can take it"}, true),
		Refusal(&placement.Status{Code: placement.NoIPCapacity, Message: "m"}, true),
		Refusal(&placement.Status{Code: placement.NodeBusy, Message: "m"}, true),
		Refusal(&placement.Status{Code: placement.NodeBusy, Message: "m"}, false),
	} {
		e, ok := apierr.As(err)
		if !ok || e.Status != 503 || e.RetryAfter <= 0 || e.Message == "" {
			t.Errorf("%#v: want a 503 with a message and a Retry-After", e)
		}
	}
	e, _ := apierr.As(Refusal(&placement.Status{Code: placement.NodeOffline, Message: "m"}, true))
	if e.Status != 409 || e.RetryAfter != 0 || e.Code != "POD_NODE_OFFLINE" {
		t.Errorf("409: %#v", e)
	}
}

// Every placement Code has an answer, for a VM and for a pod, and only a
// 503 asks for a Retry-After.
func TestEveryPlacementCodeHasAnAnswer(t *testing.T) {
	for _, c := range placement.Codes {
		a, ok := Answers[c]
		if !ok {
			t.Errorf("%s: no answer", c)
			continue
		}
		if a.VMCode == "" || a.PodCode == "" || (a.HTTPStatus != 409 && a.HTTPStatus != 503) {
			t.Errorf("%s: incomplete answer %+v", c, a)
		}
		if (a.HTTPStatus == 503) != (a.RetryAfter > 0) {
			t.Errorf("%s: Retry-After %d with status %d", c, a.RetryAfter, a.HTTPStatus)
		}
		for _, pod := range []bool{false, true} {
			e := Refusal(&placement.Status{Code: c, Message: "why"}, pod)
			if e.Code != a.APICode(pod) || e.Status != a.HTTPStatus || e.Message != "why" {
				t.Errorf("%s pod=%v: %#v", c, pod, e)
			}
		}
	}
	if len(Answers) != len(placement.Codes) {
		t.Errorf("%d answers for %d codes", len(Answers), len(placement.Codes))
	}
}
