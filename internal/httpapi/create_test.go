package httpapi_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// POST /v1/vms on both engines: 201 deploying with Location and the seed's
// VM object (byte for byte what GET answers), 201 pending with the
// summary, an Idempotency-Key replay (with its Location), 400 for an unknown member, 409
// UNSCHEDULABLE, 503 with queue false.
func TestCreateVMOverREST(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, servertest.Base)
		body := []byte(`{"name": "train", "gpuModelId": "h100-80gb", "gpuCount": 2, "cpuCores": 8, "ramGb": 64, "diskSizeGb": 100}`)
		key := http.Header{"Idempotency-Key": {"create-1"}}
		resp := env.Request(http.MethodPost, "/v1/vms", "acme-operator", body, key)
		var vm map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&vm); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		id, _ := vm["id"].(string)
		if resp.StatusCode != http.StatusCreated || resp.Header.Get("Location") != "/v1/vms/"+id {
			t.Fatalf("%d Location %q, want 201 /v1/vms/%s", resp.StatusCode, resp.Header.Get("Location"), id)
		}
		if vm["status"] != "deploying" || vm["nodeId"] != "n1" || vm["computeClass"] != "on_demand" ||
			vm["organizationId"] != "org-acme" || vm["gpuManufacturer"] != "NVIDIA" || vm["statusReason"] != "" {
			t.Errorf("created: %v", vm)
		}
		if ids, _ := vm["gpuIds"].([]any); len(ids) != 2 || ids[0] != "n1-g5" || ids[1] != "n1-g6" {
			t.Errorf("gpuIds %v, want n1-g5 n1-g6", vm["gpuIds"])
		}
		// The replay: the same 201, body and Location.
		status, again, h := doRaw(t, env, http.MethodPost, "/v1/vms", "acme-operator", body, key)
		_, read := env.Do(http.MethodGet, "/v1/vms/"+id, "acme-reader", nil, nil)
		if status != http.StatusCreated || string(again) != string(read) {
			t.Errorf("replay %d %s, want 201 and the object GET answers %s", status, again, read)
		}
		if h.Get("Location") != "/v1/vms/"+id || h.Get("Idempotent-Replayed") != "true" || h.Get("Content-Type") != "application/json" {
			t.Errorf("replay's Location %q, Idempotent-Replayed %q, Content-Type %q; want /v1/vms/%s, true, application/json",
				h.Get("Location"), h.Get("Idempotent-Replayed"), h.Get("Content-Type"), id)
		}

		status, b := env.Do(http.MethodPost, "/v1/vms", "acme-operator",
			[]byte(`{"name": "waits", "gpuModelId": "h100-80gb", "gpuCount": 1, "cpuCores": 8, "ramGb": 64, "diskSizeGb": 100}`), nil)
		var pending map[string]any
		_ = json.Unmarshal(b, &pending)
		if status != http.StatusCreated || pending["status"] != "pending" ||
			pending["statusReason"] != "0/2 nodes can take it: 1 offline, 1 too few free NVIDIA H100 80GB HBM3 GPUs" {
			t.Errorf("queued: %d %s", status, b)
		}

		for _, c := range []struct {
			body         string
			status       int
			code, detail string
		}{
			{`{"name": "x", "gpuModel": "h100-80gb"}`, 400, "BAD_REQUEST", ""},
			{`{"name": "x", "gpuModelId": "h100-80gb", "gpuCount": 9, "cpuCores": 1, "ramGb": 1, "diskSizeGb": 1}`, 409, "UNSCHEDULABLE",
				"no node of the fleet has 9 NVIDIA H100 80GB HBM3 GPUs: the most one node has is 8"},
			{`{"name": "x", "gpuModelId": "h100-80gb", "gpuCount": 1, "cpuCores": 1, "ramGb": 1, "diskSizeGb": 1, "queue": false}`, 503, "VM_NO_CAPACITY",
				"0/2 nodes can take it: 1 offline, 1 too few free NVIDIA H100 80GB HBM3 GPUs"},
			{`{"name": "x", "gpuModelId": "b300", "gpuCount": 1, "cpuCores": 1, "ramGb": 1, "diskSizeGb": 1}`, 404, "GPU_MODEL_NOT_FOUND",
				`there is no GPU model "b300" in the catalog`},
		} {
			resp := env.Request(http.MethodPost, "/v1/vms", "acme-operator", []byte(c.body), nil)
			var e struct {
				Error struct{ Code, Message string } `json:"error"`
			}
			_ = json.NewDecoder(resp.Body).Decode(&e)
			resp.Body.Close()
			if resp.StatusCode != c.status || e.Error.Code != c.code || (c.detail != "" && e.Error.Message != c.detail) {
				t.Errorf("%s: %d %s %q, want %d %s %q", c.body, resp.StatusCode, e.Error.Code, e.Error.Message, c.status, c.code, c.detail)
			}
			if c.status == 503 && resp.Header.Get("Retry-After") != "60" {
				t.Errorf("Retry-After %q, want 60", resp.Header.Get("Retry-After"))
			}
		}
		if status, _ := env.Do(http.MethodPost, "/v1/vms", "acme-reader", body, nil); status != http.StatusForbidden {
			t.Errorf("a reader's create: %d, want 403", status)
		}
	})
}

// createVm on GraphQL: the same service; a pending VM shows its queue
// position and the reason it waits.
func TestCreateVMOverGraphQL(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, servertest.Base)
		const m = `mutation($in: CreateVmInput!) { createVm(input: $in) { id status statusReason queuePosition gpuIds events { transition from to } } }`
		in := func(name string, gpus int) map[string]any {
			return map[string]any{"in": map[string]any{"name": name, "gpuModelId": "h100-80gb", "gpuCount": gpus,
				"cpuCores": 8, "ramGb": 64, "diskSizeGb": 100}}
		}
		var got struct {
			CreateVM struct {
				ID, Status, StatusReason string
				QueuePosition            *int
				GpuIds                   []string
				Events                   []struct{ Transition, From, To string }
			} `json:"createVm"`
		}
		env.Decode(env.GraphQL("acme-operator", m, in("a", 2)), &got)
		if got.CreateVM.Status != "DEPLOYING" || got.CreateVM.QueuePosition != nil || len(got.CreateVM.GpuIds) != 2 ||
			len(got.CreateVM.Events) != 1 || got.CreateVM.Events[0].Transition != "create-placed" {
			t.Errorf("placed: %+v", got.CreateVM)
		}
		for i, name := range []string{"b", "c"} {
			env.Decode(env.GraphQL("acme-operator", m, in(name, 1)), &got)
			if got.CreateVM.Status != "PENDING" || got.CreateVM.QueuePosition == nil || *got.CreateVM.QueuePosition != i+1 ||
				got.CreateVM.StatusReason != "0/2 nodes can take it: 1 offline, 1 too few free NVIDIA H100 80GB HBM3 GPUs" {
				t.Errorf("queued %s: %+v", name, got.CreateVM)
			}
		}
		r := env.GraphQL("acme-operator", m, in("d", 9))
		if len(r.Errors) != 1 || r.Code() != "UNSCHEDULABLE" {
			t.Errorf("unschedulable: %+v", r.Errors)
		}
		r = env.GraphQL("globex-operator", `{ vms { vms { name queuePosition } } }`, nil)
		var list struct {
			VMs struct {
				VMs []struct {
					Name          string
					QueuePosition *int
				}
			} `json:"vms"`
		}
		env.Decode(r, &list)
		for _, v := range list.VMs.VMs {
			if v.QueuePosition != nil {
				t.Errorf("another organization sees %s at %d", v.Name, *v.QueuePosition)
			}
		}
	})
}
