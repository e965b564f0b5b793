package httpapi_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/httpapi"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// volumeFieldFixture: node dgx-va online with six GPUs, dgx-vgone removed.
// Organization o-vol has pod-keep stopped on dgx-va and pod-move
// interrupted on the removed node; o-other runs vm-other on dgx-va.
const volumeFieldFixture = `{
 "gpuModels": [{"id": "h100", "name": "NVIDIA H100 80GB HBM3", "manufacturer": "NVIDIA", "memoryGb": 80}],
 "organizations": [{"id": "o-vol", "name": "Vol", "tenantId": 81}, {"id": "o-other", "name": "Other", "tenantId": 82}],
 "apiKeys": [{"token": "vol-op", "organizationId": "o-vol", "permissions": ["compute.read", "compute.operate"]},
             {"token": "other-reader", "organizationId": "o-other", "permissions": ["compute.read"]}],
 "nodes": [{"id": "n-va", "name": "dgx-va", "clusterId": "c-vol", "status": "online", "agentVersion": "2.6.1", "cpuCores": 64, "ramGb": 512, "diskGb": 4000,
            "gpus": [{"id": "va0", "index": 0, "uuid": "GPU-va0", "modelId": "h100"}, {"id": "va1", "index": 1, "uuid": "GPU-va1", "modelId": "h100"},
                     {"id": "va2", "index": 2, "uuid": "GPU-va2", "modelId": "h100"}, {"id": "va3", "index": 3, "uuid": "GPU-va3", "modelId": "h100"},
                     {"id": "va4", "index": 4, "uuid": "GPU-va4", "modelId": "h100"}, {"id": "va5", "index": 5, "uuid": "GPU-va5", "modelId": "h100"}]},
           {"id": "n-vgone", "name": "dgx-vgone", "clusterId": "c-vol", "status": "removed", "agentVersion": "2.6.1", "cpuCores": 64, "ramGb": 512, "diskGb": 4000,
            "gpus": [{"id": "vg0", "index": 0, "uuid": "GPU-vg0", "modelId": "h100"}]}],
 "vms": [{"id": "pod-keep", "name": "keep", "organizationId": "o-vol", "nodeId": "n-va", "status": "stopped", "statusReason": "user_stopped", "createdAt": "2026-01-01T00:00:00Z",
          "capabilityTier": "pod", "imageUrl": "busybox:stable", "gpuModelId": "h100", "gpuCount": 1, "volumeGb": 10, "provisioningStage": "ready"},
         {"id": "pod-move", "name": "move", "organizationId": "o-vol", "nodeId": "n-vgone", "status": "interrupted", "statusReason": "node_lost", "createdAt": "2026-01-01T00:00:00Z",
          "capabilityTier": "pod", "imageUrl": "busybox:stable", "gpuModelId": "h100", "gpuCount": 1, "gpuIds": ["vg0"], "volumeGb": 20, "provisioningStage": "ready"},
         {"id": "vm-other", "name": "other", "organizationId": "o-other", "nodeId": "n-va", "status": "running", "createdAt": "2026-01-01T00:00:00Z",
          "gpuModelId": "h100", "gpuCount": 1, "gpuIds": ["va5"], "cpuCores": 8, "ramGb": 64, "diskSizeGb": 300, "provisioningStage": "ready"}]
}`

// volumeSelection is every field of Volume.
const volumeSelection = `volume { id sizeGb mountPath fresh createdAt nodeId node { name } }`

// VM.volume answers the row's live volume as the table holds it: made
// fresh by a create's placement, no longer fresh once the agent reports
// the run running, the same across a reboot, a recreate and a stop/start
// on its node, a new fresh one after a move, none once terminated; a
// pod's mounted at /workspace, a VM's (its disk) at none. Another
// organization's VM, and so its volume, is never readable. Both engines.
func TestVMVolumeField(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, volumeFieldFixture)
		url := env.Srv.URL
		cred := servertest.NodeCredential(t, st, "dgx-va", "c-vol")
		ctx := context.Background()
		// created is the createdAt of the row's live volume, as the Time
		// scalar writes it: the instant the server made it.
		created := func(id string) string {
			t.Helper()
			v, err := st.Volume(ctx, id)
			if err != nil || v == nil {
				t.Fatalf("%s's live volume: %+v %v", id, v, err)
			}
			return models.FormatTime(v.CreatedAt)
		}
		volume := func(token, id string) string {
			t.Helper()
			return string(servertest.GQLDo(t, env.Srv.URL, token, `query($id: ID!) { vm(id: $id) { `+volumeSelection+` } }`, map[string]any{"id": id}))
		}
		want := func(id, volID string, size int, mount string, fresh bool, node string) string {
			nodeID := map[string]string{"dgx-va": "n-va", "dgx-vgone": "n-vgone"}[node]
			return fmt.Sprintf(`{"vm":{"volume":{"id":"%s","sizeGb":%d,"mountPath":%s,"fresh":%v,"createdAt":"%s","nodeId":"%s","node":{"name":"%s"}}}}`,
				volID, size, mount, fresh, created(id), nodeID, node)
		}
		running := func(id string, gen int) {
			t.Helper()
			servertest.HeartbeatAs(t, url, cred, "dgx-va", nil, agentapi.WorkloadReport{ID: id, Generation: gen, State: agentapi.StateRunning, ProvisioningStage: agentapi.StageReady})
		}
		mutate := func(query string) string {
			t.Helper()
			r := env.GraphQL("vol-op", query, nil)
			if len(r.Errors) > 0 {
				t.Fatalf("%s: %+v", query, r.Errors)
			}
			return string(r.Data)
		}

		// A VM created and placed: a fresh volume of its diskSizeGb on its
		// node, which its disk is (no mount path).
		var made struct {
			CreateVM struct{ ID string } `json:"createVm"`
		}
		env.Decode(env.GraphQL("vol-op", `mutation { createVm(input: {name: "vm-a", gpuModelId: "h100", gpuCount: 1, cpuCores: 8, ramGb: 64, diskSizeGb: 100}) { id } }`, nil), &made)
		vm := made.CreateVM.ID
		if got, w := volume("vol-op", vm), want(vm, "vol-"+vm+"-1", 100, "null", true, "dgx-va"); got != w {
			t.Errorf("created VM:\n got %s\nwant %s", got, w)
		}
		running(vm, 1)
		if got, w := volume("vol-op", vm), want(vm, "vol-"+vm+"-1", 100, "null", false, "dgx-va"); got != w {
			t.Errorf("running VM:\n got %s\nwant %s", got, w)
		}
		// A reboot in place keeps it; the mutation's answer says so too.
		if got, w := mutate(`mutation { restartVm(id: "`+vm+`") { `+volumeSelection+` } }`),
			strings.Replace(want(vm, "vol-"+vm+"-1", 100, "null", false, "dgx-va"), `"vm"`, `"restartVm"`, 1); got != w {
			t.Errorf("rebooted VM:\n got %s\nwant %s", got, w)
		}

		// A pod created and placed: its /workspace of volumeGb.
		env.Decode(env.GraphQL("vol-op", `mutation { createVm(input: {name: "pod-a", capabilityTier: "pod", gpuModelId: "h100", gpuCount: 1, imageUrl: "busybox:stable", volumeGb: 10}) { id } }`, nil), &made)
		pod := made.CreateVM.ID
		if got, w := volume("vol-op", pod), want(pod, "vol-"+pod+"-1", 10, `"/workspace"`, true, "dgx-va"); got != w {
			t.Errorf("created pod:\n got %s\nwant %s", got, w)
		}
		running(pod, 1)
		mutate(`mutation { restartVm(id: "` + pod + `") { id } }`) // a recreate
		running(pod, 2)
		if got, w := volume("vol-op", pod), want(pod, "vol-"+pod+"-1", 10, `"/workspace"`, false, "dgx-va"); got != w {
			t.Errorf("recreated pod:\n got %s\nwant %s", got, w)
		}

		// Stop/start on its node keeps the fixture's volume.
		keep := want("pod-keep", "vol-pod-keep-0", 10, `"/workspace"`, false, "dgx-va")
		if got := volume("vol-op", "pod-keep"); got != keep {
			t.Errorf("stopped pod-keep:\n got %s\nwant %s", got, keep)
		}
		mutate(`mutation { restartVm(id: "pod-keep") { id } }`)
		if got := volume("vol-op", "pod-keep"); got != keep {
			t.Errorf("restarted pod-keep:\n got %s\nwant %s", got, keep)
		}

		// A move: the old volume stays with the removed node and is gone;
		// the restart's row has a new, fresh one on dgx-va.
		if got, w := volume("vol-op", "pod-move"), want("pod-move", "vol-pod-move-0", 20, `"/workspace"`, false, "dgx-vgone"); got != w {
			t.Errorf("pod-move before the move:\n got %s\nwant %s", got, w)
		}
		mutate(`mutation { restartVm(id: "pod-move") { id } }`)
		if got, w := volume("vol-op", "pod-move"), want("pod-move", "vol-pod-move-1", 20, `"/workspace"`, true, "dgx-va"); got != w {
			t.Errorf("pod-move after the move:\n got %s\nwant %s", got, w)
		}

		// Another organization's VM is not readable, nor through the node
		// or the GPU it holds; its own organization reads its volume.
		if got := volume("vol-op", "vm-other"); got != `{"vm":null}` {
			t.Errorf("o-vol reads vm-other: %s", got)
		}
		if got, w := volume("other-reader", "vm-other"), want("vm-other", "vol-vm-other-0", 300, "null", false, "dgx-va"); got != w {
			t.Errorf("o-other's vm-other:\n got %s\nwant %s", got, w)
		}
		through := `{ nodes { vms { id volume { id } } gpus { vm { id volume { id } } } } }`
		if got := string(servertest.GQLDo(t, env.Srv.URL, "vol-op", through, nil)); strings.Contains(got, "vm-other") {
			t.Errorf("o-vol reaches vm-other's volume through its node: %s", got)
		}
		if got := string(servertest.GQLDo(t, env.Srv.URL, "other-reader", through, nil)); strings.Count(got, `"volume":{"id":"vol-vm-other-0"}`) != 2 || strings.Contains(got, "pod-") {
			t.Errorf("o-other through its node: %s", got)
		}

		// A stop keeps the volume on its node; a terminate deletes it. In
		// one document, each answer reads what its change left.
		if got, w := mutate(`mutation { s: stopVm(id: "`+pod+`") { volume { id } } t: terminateVm(id: "`+pod+`") { volume { id } } }`),
			`{"s":{"volume":{"id":"vol-`+pod+`-1"}},"t":{"volume":null}}`; got != w {
			t.Errorf("stopped, then terminated pod: %s, want %s", got, w)
		}
		if got := volume("vol-op", pod); got != `{"vm":{"volume":null}}` {
			t.Errorf("terminated pod: %s", got)
		}
	})
}

// A page of VMs reads their volumes in one statement, and the volumes'
// nodes in one more, whatever the page size; a GPU's holder reads its
// volume beside it. Both engines.
func TestVMVolumesPrefetchInOneStatement(t *testing.T) {
	noWait := servertest.Options{LoaderWait: time.Nanosecond}
	cases := []struct {
		name, query string
		want        int64
		perVM       int // volumes answered per VM
	}{
		// key lookup + page + volumes + their nodes
		{"vms", `{ vms(limit: 500) { vms { id volume { id sizeGb node { name } } } } }`, 4, 1},
		// key lookup + nodes + gpus + holders + their volumes (beside them);
		// each VM holds two GPUs
		{"gpu holders", `{ nodes { gpus { vm { id volume { id } } } } }`, 5, 2},
		// key lookup + nodes + vms + their volumes (one level later)
		{"node vms", `{ nodes { vms { volume { id } } } }`, 4, 1},
	}
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		for _, n := range []int{5, 50} {
			env := servertest.NewWithOptions(t, storetest.Open(t, st.Dialect), strings.ReplaceAll(fleet(n), `"gpuCount":2,`, `"gpuCount":2,"diskSizeGb":100,`), noWait, httpapi.Config{})
			for _, c := range cases {
				var r *servertest.Response
				got := env.Statements(func() { r = env.GraphQL("fleet-reader", c.query, nil) })
				if len(r.Errors) > 0 {
					t.Fatalf("%s: %+v", c.name, r.Errors)
				}
				if got != c.want {
					t.Errorf("%s over %d VMs: %d statements, want %d", c.name, n, got, c.want)
				}
				if v := strings.Count(string(r.Data), `"volume":{"id":"vol-vm`); v != n*c.perVM {
					t.Errorf("%s over %d VMs: %d volumes, want %d", c.name, n, v, n*c.perVM)
				}
			}
		}
	})
}
