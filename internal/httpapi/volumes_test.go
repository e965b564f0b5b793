package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// volumesFixture: node dgx-va online with two GPUs; node dgx-vgone
// removed. pod-keep stopped on dgx-va (its /workspace is there); pod-move
// interrupted on the removed node, so a restart places it afresh.
const volumesFixture = `{
 "gpuModels": [{"id": "h100", "name": "NVIDIA H100 80GB HBM3", "manufacturer": "NVIDIA", "memoryGb": 80}],
 "organizations": [{"id": "o-vol", "name": "Vol", "tenantId": 81}],
 "apiKeys": [{"token": "vol-op", "organizationId": "o-vol", "permissions": ["compute.read", "compute.operate"]}],
 "nodes": [{"id": "n-va", "name": "dgx-va", "clusterId": "c-vol", "status": "online", "agentVersion": "2.6.1", "cpuCores": 64, "ramGb": 512, "diskGb": 4000,
            "gpus": [{"id": "va0", "index": 0, "uuid": "GPU-va0", "modelId": "h100"}, {"id": "va1", "index": 1, "uuid": "GPU-va1", "modelId": "h100"}]},
           {"id": "n-vgone", "name": "dgx-vgone", "clusterId": "c-vol", "status": "removed", "agentVersion": "2.6.1", "cpuCores": 64, "ramGb": 512, "diskGb": 4000,
            "gpus": [{"id": "vg0", "index": 0, "uuid": "GPU-vg0", "modelId": "h100"}]}],
 "vms": [{"id": "pod-keep", "name": "keep", "organizationId": "o-vol", "nodeId": "n-va", "status": "stopped", "statusReason": "user_stopped", "createdAt": "2026-01-01T00:00:00Z",
          "capabilityTier": "pod", "imageUrl": "busybox:stable", "gpuModelId": "h100", "gpuCount": 1, "volumeGb": 10, "provisioningStage": "ready"},
         {"id": "pod-move", "name": "move", "organizationId": "o-vol", "nodeId": "n-vgone", "status": "interrupted", "statusReason": "node_lost", "createdAt": "2026-01-01T00:00:00Z",
          "capabilityTier": "pod", "imageUrl": "busybox:stable", "gpuModelId": "h100", "gpuCount": 1, "gpuIds": ["vg0"], "volumeGb": 20, "provisioningStage": "ready"}]
}`

// Volumes are rows bound to a node: a pod keeps its /workspace across
// stop/start on its node (same id, not fresh), and a restart that places
// it on another node makes a fresh one there (the old one deleted), which
// the answer's Warning, the event log and the node's assignment say; a
// terminate deletes it. Both engines.
func TestVolumesFollowTheNode(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, volumesFixture)
		url := env.Srv.URL
		cred := servertest.NodeCredential(t, st, "dgx-va", "c-vol")
		ctx := context.Background()
		volumes := func(id string) string {
			t.Helper()
			vs, err := st.Volumes(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, v := range vs {
				out = append(out, fmt.Sprintf("%s@%s/%dGB fresh=%v deleted=%v", v.ID, v.NodeID, v.SizeGb, v.Fresh, v.DeletedAt != nil))
			}
			return strings.Join(out, " ")
		}
		restart := func(id, warning string) {
			t.Helper()
			resp := env.Request("POST", "/v1/vms/"+id+"/restart", "vol-op", nil, nil)
			resp.Body.Close()
			if resp.StatusCode != 200 || resp.Header.Get("Warning") != warning {
				t.Fatalf("restart %s: %d, Warning %q; want 200 and %q", id, resp.StatusCode, resp.Header.Get("Warning"), warning)
			}
		}
		volumeOf := func(resp agentapi.HeartbeatResponse, id string) string {
			for _, a := range resp.Workloads {
				if a.ID == id {
					if a.Volume == nil {
						return fmt.Sprintf("%s@%d no volume", a.ID, a.Generation)
					}
					v := a.Volume
					return fmt.Sprintf("%s@%d %s %dGB %s fresh=%v delete=%v", a.ID, a.Generation, v.ID, v.SizeGb, v.MountPath, v.Fresh, v.Delete)
				}
			}
			return id + " not assigned"
		}

		// The data set gives each row that holds a disk its volume.
		if got, want := volumes("pod-keep"), "vol-pod-keep-0@n-va/10GB fresh=false deleted=false"; got != want {
			t.Fatalf("pod-keep's volumes: %s, want %s", got, want)
		}
		if got, want := volumes("pod-move"), "vol-pod-move-0@n-vgone/20GB fresh=false deleted=false"; got != want {
			t.Fatalf("pod-move's volumes: %s, want %s", got, want)
		}

		// Stop/start on one node keeps the volume.
		restart("pod-keep", "")
		if got, want := volumeOf(servertest.HeartbeatAs(t, url, cred, "dgx-va", nil), "pod-keep"), "pod-keep@1 vol-pod-keep-0 10GB /workspace fresh=false delete=false"; got != want {
			t.Errorf("assignment: %s, want %s", got, want)
		}
		servertest.HeartbeatAs(t, url, cred, "dgx-va", nil, agentapi.WorkloadReport{ID: "pod-keep", Generation: 1, State: agentapi.StateRunning, ProvisioningStage: agentapi.StageReady})
		if s, b := env.Do("POST", "/v1/vms/pod-keep/stop", "vol-op", nil, nil); s != 200 {
			t.Fatalf("stop: %d %s", s, b)
		}
		// The teardown, where the server waits for it.
		servertest.HeartbeatAs(t, url, cred, "dgx-va", nil, agentapi.WorkloadReport{ID: "pod-keep", Generation: 1, State: agentapi.StateGone})
		restart("pod-keep", "")
		if got, want := volumes("pod-keep"), "vol-pod-keep-0@n-va/10GB fresh=false deleted=false"; got != want {
			t.Errorf("pod-keep's volumes after stop/start: %s, want %s", got, want)
		}
		if got, want := volumeOf(servertest.HeartbeatAs(t, url, cred, "dgx-va", nil), "pod-keep"), "pod-keep@2 vol-pod-keep-0 10GB /workspace fresh=false delete=false"; got != want {
			t.Errorf("assignment after stop/start: %s, want %s", got, want)
		}

		// A move: the disk is gone with the removed node; a fresh volume on
		// the new one, named in the answer, the event and the assignment.
		// Sent with an Idempotency-Key, its replay warns the same.
		const moved = `299 - "the disk is gone: deployed fresh on node n-va with a fresh, empty volume vol-pod-move-1"`
		status, first, h := doRaw(t, env, "POST", "/v1/vms/pod-move/restart", "vol-op", nil, withKey("move-1"))
		if status != 200 || h.Get("Warning") != moved {
			t.Fatalf("restart pod-move: %d, Warning %q; want 200 and %q", status, h.Get("Warning"), moved)
		}
		status, again, h := doRaw(t, env, "POST", "/v1/vms/pod-move/restart", "vol-op", nil, withKey("move-1"))
		if status != 200 || string(again) != string(first) || h.Get("Warning") != moved || h.Get("Idempotent-Replayed") != "true" {
			t.Errorf("replayed restart of pod-move: %d, Warning %q, Idempotent-Replayed %q; want 200, %q, true and the first body\n%s\n%s",
				status, h.Get("Warning"), h.Get("Idempotent-Replayed"), moved, again, first)
		}
		if got, want := volumes("pod-move"), "vol-pod-move-0@n-vgone/20GB fresh=false deleted=true vol-pod-move-1@n-va/20GB fresh=true deleted=false"; got != want {
			t.Errorf("pod-move's volumes after the move: %s, want %s", got, want)
		}
		if got, want := volumeOf(servertest.HeartbeatAs(t, url, cred, "dgx-va", nil), "pod-move"), "pod-move@1 vol-pod-move-1 20GB /workspace fresh=true delete=false"; got != want {
			t.Errorf("assignment after the move: %s, want %s", got, want)
		}
		// Once a run on it is running it holds data: no longer fresh.
		servertest.HeartbeatAs(t, url, cred, "dgx-va", nil, agentapi.WorkloadReport{ID: "pod-move", Generation: 1, State: agentapi.StateRunning, ProvisioningStage: agentapi.StageReady})
		if got, want := volumeOf(servertest.HeartbeatAs(t, url, cred, "dgx-va", nil), "pod-move"), "pod-move@1 vol-pod-move-1 20GB /workspace fresh=false delete=false"; got != want {
			t.Errorf("assignment once running: %s, want %s", got, want)
		}

		// The event log on both faces: the runs started and what they run on.
		s, b := env.Do("GET", "/v1/vms/pod-move/events", "vol-op", nil, nil)
		var page struct {
			Events []map[string]any `json:"events"`
		}
		if err := json.Unmarshal(b, &page); s != 200 || err != nil {
			t.Fatalf("events: %d %s", s, b)
		}
		var got []string
		for _, e := range page.Events {
			got = append(got, fmt.Sprintf("%v:%v>%v stage=%v volume=%v fresh=%v", e["transition"], e["from"], e["to"], e["provisioningStage"], e["volumeId"], e["freshVolume"]))
		}
		if want := []string{
			"restart-replace:interrupted>deploying stage=scheduled volume=vol-pod-move-1 fresh=true",
			"agent-running:deploying>running stage=ready volume=<nil> fresh=<nil>",
		}; strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("REST events of pod-move:\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
		}
		data := servertest.GQLDo(t, env.Srv.URL, "vol-op", `{ vm(id: "pod-keep") { provisioningStage events { transition provisioningStage volumeId freshVolume } } }`, nil)
		if want := `{"vm":{"provisioningStage":"scheduled","events":[` +
			`{"transition":"restart-deploy","provisioningStage":"scheduled","volumeId":"vol-pod-keep-0","freshVolume":false},` +
			`{"transition":"agent-running","provisioningStage":"ready","volumeId":"","freshVolume":false},` +
			`{"transition":"user-stop","provisioningStage":"ready","volumeId":"","freshVolume":false},` +
			`{"transition":"agent-gone","provisioningStage":"ready","volumeId":"","freshVolume":false},` +
			`{"transition":"restart-deploy","provisioningStage":"scheduled","volumeId":"vol-pod-keep-0","freshVolume":false}]}}`; string(data) != want {
			t.Errorf("GraphQL:\n got %s\nwant %s", data, want)
		}

		// A terminate deletes the volume: the disk goes with the row.
		if s, b := env.Do("DELETE", "/v1/vms/pod-keep", "vol-op", nil, nil); s != 200 {
			t.Fatalf("terminate: %d %s", s, b)
		}
		if got, want := volumes("pod-keep"), "vol-pod-keep-0@n-va/10GB fresh=false deleted=true"; got != want {
			t.Errorf("pod-keep's volumes after terminate: %s, want %s", got, want)
		}
		if vm := servertest.ReadVM(t, st, "pod-keep"); vm.Status != models.VMTerminated {
			t.Errorf("pod-keep: %s", vm.Status)
		}
	})
}
