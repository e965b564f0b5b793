package instancetypes_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"gpugraph/internal/dataset"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// operatorsKey adds the platform operator's key (nodes.admin) to the fixture.
const operatorsKey = `{"apiKeys": [{"token": "acme-ops", "organizationId": "org-acme", "permissions": ["nodes.admin"]}]}`

func newTypesEnv(t *testing.T, st *store.Store) *servertest.Env {
	env := servertest.New(t, st, servertest.Base)
	if _, err := dataset.LoadFile(context.Background(), st, []byte(operatorsKey)); err != nil {
		t.Fatal(err)
	}
	return env
}

// GET /v1/instance-types answers the catalog by name with the VM object's
// keys and each type's capacity on the fixture fleet (n1: 2 free healthy
// H100, 80 free cores; n2 offline), to any key of an organization.
func TestInstanceTypesREST(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := newTypesEnv(t, st)
		for _, key := range []string{"acme-reader", "acme-metrics", "globex-operator"} {
			s, b := env.Do("GET", "/v1/instance-types", key, nil, nil)
			if s != 200 {
				t.Fatalf("%s: %d %s", key, s, b)
			}
			var list struct {
				InstanceTypes []json.RawMessage `json:"instanceTypes"`
			}
			if err := json.Unmarshal(b, &list); err != nil || len(list.InstanceTypes) != 5 {
				t.Fatalf("%s: %s", key, b)
			}
			want := []string{
				`{"name":"cpu_16c_64gb","gpuModelId":null,"gpuModelName":"","gpuManufacturer":"","gpuCount":0,"cpuCores":16,"ramGb":64,"diskSizeGb":500,"volumeGb":0,"pricePerHourCents":40,"description":"16 CPU cores, 64 GB RAM, 500 GB NVMe","capacity":[{"clusterId":"` + east + `","nodePool":"default","available":5}]}`,
				`{"name":"gpu_1x_h100_sxm5","gpuModelId":"h100-80gb","gpuModelName":"NVIDIA H100 80GB HBM3","gpuManufacturer":"NVIDIA","gpuCount":1,"cpuCores":16,"ramGb":256,"diskSizeGb":3750,"volumeGb":250,"pricePerHourCents":249,"description":"1x H100 80GB SXM5, 16 CPU cores, 256 GB RAM, 3.75 TB NVMe","capacity":[{"clusterId":"` + east + `","nodePool":"default","available":2}]}`,
			}
			for i, w := range want {
				if got := string(list.InstanceTypes[i]); got != w {
					t.Errorf("%s: type %d:\n got %s\nwant %s", key, i, got, w)
				}
			}
		}
		s, b := env.Do("GET", "/v1/instance-types/gpu_4x_mi300x", "acme-reader", nil, nil)
		if want := `{"name":"gpu_4x_mi300x","gpuModelId":"mi300x","gpuModelName":"AMD Instinct MI300X","gpuManufacturer":"AMD","gpuCount":4,"cpuCores":64,"ramGb":1024,"diskSizeGb":10000,"volumeGb":1000,"pricePerHourCents":876,"description":"4x MI300X 192GB, 64 CPU cores, 1 TB RAM, 10 TB NVMe","capacity":[{"clusterId":"` + east + `","nodePool":"default","available":0}]}` + "\n"; s != 200 || string(b) != want {
			t.Errorf("get: %d %s", s, b)
		}
		s, b = env.Do("GET", "/v1/instance-types/gpu_1x_b200", "acme-reader", nil, nil)
		if want := `{"error":{"code":"INSTANCE_TYPE_NOT_FOUND","message":"there is no instance type \"gpu_1x_b200\"","requestId":"servertest"}}` + "\n"; s != 404 || string(b) != want {
			t.Errorf("unknown: %d %s", s, b)
		}
		if s, b := env.Do("GET", "/v1/instance-types", "", nil, nil); s != 401 || servertest.ErrorCode(t, b) != "UNAUTHENTICATED" {
			t.Errorf("no key: %d %s", s, b)
		}
	})
}

// Capacity drops when a restart claims GPUs: vm-acme-2 (1 H100) starts on
// n1, and the 1x type then has 1 place left, the 2x none.
func TestInstanceTypeCapacityFollowsRestarts(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := newTypesEnv(t, st)
		available := func(name string) int {
			t.Helper()
			r := env.GraphQL("acme-reader", `query($n: String!) { instanceType(name: $n) { capacity { clusterId nodePool available } } }`, map[string]any{"n": name})
			var d struct {
				InstanceType struct {
					Capacity []struct{ Available int }
				}
			}
			env.Decode(r, &d)
			return d.InstanceType.Capacity[0].Available
		}
		if a, b := available("gpu_1x_h100_sxm5"), available("gpu_2x_h100_sxm5"); a != 2 || b != 1 {
			t.Fatalf("before: 1x %d, 2x %d", a, b)
		}
		if s, b := env.Do("POST", "/v1/vms/vm-acme-2/restart", "acme-operator", nil, nil); s != 200 {
			t.Fatalf("restart: %d %s", s, b)
		}
		if a, b := available("gpu_1x_h100_sxm5"), available("gpu_2x_h100_sxm5"); a != 1 || b != 0 {
			t.Fatalf("after: 1x %d, 2x %d", a, b)
		}
	})
}

// GraphQL's instanceTypes answers the same values, the model as a
// GpuModel; instanceType of an unknown name is null.
func TestInstanceTypesGraphQL(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := newTypesEnv(t, st)
		r := env.GraphQL("acme-metrics", `{ instanceTypes { name gpuModelId gpuModel { name manufacturer } gpuCount cpuCores ramGb diskSizeGb volumeGb pricePerHourCents capacity { clusterId nodePool available } } missing: instanceType(name: "nope") { name } }`, nil)
		if len(r.Errors) > 0 {
			t.Fatalf("errors: %+v", r.Errors)
		}
		var d struct {
			InstanceTypes []json.RawMessage
			Missing       *json.RawMessage
		}
		env.Decode(r, &d)
		if len(d.InstanceTypes) != 5 || d.Missing != nil {
			t.Fatalf("%s", r.Data)
		}
		want := `{"name":"gpu_2x_h100_sxm5","gpuModelId":"h100-80gb","gpuModel":{"name":"NVIDIA H100 80GB HBM3","manufacturer":"NVIDIA"},"gpuCount":2,"cpuCores":32,"ramGb":512,"diskSizeGb":7500,"volumeGb":500,"pricePerHourCents":498,"capacity":[{"clusterId":"` + east + `","nodePool":"default","available":1}]}`
		if got := string(d.InstanceTypes[2]); got != want {
			t.Errorf("gpu_2x_h100_sxm5:\n got %s\nwant %s", got, want)
		}
		if got := string(d.InstanceTypes[0]); !strings.Contains(got, `"gpuModelId":null,"gpuModel":null`) {
			t.Errorf("cpu type: %s", got)
		}
		if r := env.GraphQL("", `{ instanceTypes { name } }`, nil); r.Code() != "UNAUTHENTICATED" {
			t.Errorf("no key: %+v", r.Errors)
		}
	})
}

// The operator's writes: PUT creates (201, Location) and replaces (200),
// DELETE answers 204 then 404; bad input answers 400 naming the field; a
// key without nodes.admin gets 403 before its bad body's 400.
func TestInstanceTypeWritesREST(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := newTypesEnv(t, st)
		body := []byte(`{"gpuModelId": "h100-80gb", "gpuCount": 4, "cpuCores": 64, "ramGb": 1024, "diskSizeGb": 15000, "volumeGb": 1000, "pricePerHourCents": 996, "description": "4x H100"}`)
		resp := env.Request("PUT", "/v1/instance-types/gpu_4x_h100_sxm5", "acme-ops", body, nil)
		resp.Body.Close()
		if resp.StatusCode != 201 || resp.Header.Get("Location") != "/v1/instance-types/gpu_4x_h100_sxm5" {
			t.Fatalf("create: %d %q", resp.StatusCode, resp.Header.Get("Location"))
		}
		s, b := env.Do("PUT", "/v1/instance-types/gpu_4x_h100_sxm5", "acme-ops", []byte(`{"name": "gpu_4x_h100_sxm5", "gpuModelId": "h100-80gb", "gpuCount": 4, "cpuCores": 64, "ramGb": 1024, "diskSizeGb": 15000, "pricePerHourCents": 899}`), nil)
		want := `{"name":"gpu_4x_h100_sxm5","gpuModelId":"h100-80gb","gpuModelName":"NVIDIA H100 80GB HBM3","gpuManufacturer":"NVIDIA","gpuCount":4,"cpuCores":64,"ramGb":1024,"diskSizeGb":15000,"volumeGb":0,"pricePerHourCents":899,"description":"","capacity":[{"clusterId":"` + east + `","nodePool":"default","available":0}]}` + "\n"
		if s != 200 || string(b) != want {
			t.Fatalf("replace: %d %s", s, b)
		}
		for _, c := range []struct{ path, body, msg string }{
			{"/v1/instance-types/GPU-4x", `{"cpuCores": 1}`, `name \"GPU-4x\" is not 1 to 64 lowercase letters, digits or underscores (e.g. gpu_8x_h100_sxm5)`},
			{"/v1/instance-types/x", `{"cpuCores": -1}`, `cpuCores must not be negative, got -1`},
			{"/v1/instance-types/x", `{"gpuModelId": "b200", "gpuCount": 1}`, `gpuModelId \"b200\" is not a GPU model of the catalog`},
			{"/v1/instance-types/x", `{"name": "y", "cpuCores": 1}`, `name \"y\" differs from the path's \"x\"; leave it out or send the same`},
			{"/v1/instance-types/x", `{"cpuCores": 1, "gpus": 2}`, ""},
			{"/v1/instance-types/x", `{"cpuCores": "8"}`, ""},
		} {
			s, b := env.Do("PUT", c.path, "acme-ops", []byte(c.body), nil)
			if s != 400 || servertest.ErrorCode(t, b) != "BAD_REQUEST" || (c.msg != "" && !strings.Contains(string(b), `"message":"`+c.msg+`"`)) {
				t.Errorf("PUT %s %s: %d %s", c.path, c.body, s, b)
			}
		}
		if s, b := env.Do("PUT", "/v1/instance-types/x", "acme-operator", []byte(`{"cpuCores": -1}`), nil); s != 403 || servertest.ErrorCode(t, b) != "FORBIDDEN" {
			t.Errorf("without nodes.admin: %d %s", s, b)
		}
		if s, b := env.Do("DELETE", "/v1/instance-types/gpu_1x_h100_sxm5", "acme-operator", nil, nil); s != 403 || servertest.ErrorCode(t, b) != "FORBIDDEN" {
			t.Errorf("delete without nodes.admin: %d %s", s, b)
		}
		if s, b := env.Do("DELETE", "/v1/instance-types/gpu_4x_h100_sxm5", "acme-ops", nil, nil); s != 204 || len(b) != 0 {
			t.Errorf("delete: %d %s", s, b)
		}
		if s, b := env.Do("DELETE", "/v1/instance-types/gpu_4x_h100_sxm5", "acme-ops", nil, nil); s != 404 || servertest.ErrorCode(t, b) != "INSTANCE_TYPE_NOT_FOUND" {
			t.Errorf("delete again: %d %s", s, b)
		}
		if s, _ := env.Do("GET", "/v1/instance-types/x", "acme-ops", nil, nil); s != 404 {
			t.Errorf("a refused write was kept: %d", s)
		}
	})
}

// setInstanceType and deleteInstanceType do the same on GraphQL.
func TestInstanceTypeWritesGraphQL(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := newTypesEnv(t, st)
		set := `mutation($in: InstanceTypeInput!) { setInstanceType(input: $in) { name gpuCount cpuCores pricePerHourCents gpuModel { id } capacity { available } } }`
		r := env.GraphQL("acme-ops", set, map[string]any{"in": map[string]any{"name": "cpu_8c", "cpuCores": 8, "ramGb": 32, "pricePerHourCents": 20}})
		var d struct{ SetInstanceType json.RawMessage }
		env.Decode(r, &d)
		if got, want := string(d.SetInstanceType), `{"name":"cpu_8c","gpuCount":0,"cpuCores":8,"pricePerHourCents":20,"gpuModel":null,"capacity":[{"available":10}]}`; got != want {
			t.Errorf("set:\n got %s\nwant %s", got, want)
		}
		r = env.GraphQL("acme-ops", set, map[string]any{"in": map[string]any{"name": "cpu_8c", "gpuCount": 2}})
		if r.Code() != "BAD_REQUEST" || r.Errors[0].Message != "gpuModelId is missing: a type with GPUs names their model" {
			t.Errorf("bad input: %+v", r.Errors)
		}
		r = env.GraphQL("acme-operator", set, map[string]any{"in": map[string]any{"name": "cpu_8c", "cpuCores": 1}})
		if r.Code() != "FORBIDDEN" {
			t.Errorf("without nodes.admin: %+v", r.Errors)
		}
		del := `mutation($n: String!) { deleteInstanceType(name: $n) }`
		if r := env.GraphQL("acme-ops", del, map[string]any{"n": "cpu_8c"}); len(r.Errors) > 0 || string(r.Data) != `{"deleteInstanceType":true}` {
			t.Errorf("delete: %s %+v", r.Data, r.Errors)
		}
		if r := env.GraphQL("acme-ops", del, map[string]any{"n": "cpu_8c"}); r.Code() != "INSTANCE_TYPE_NOT_FOUND" {
			t.Errorf("delete again: %+v", r.Errors)
		}
	})
}

// GPU quotas on REST: the operator sets (201, then 200), reads and lifts
// (204, then 404); an organization reads its own and not another's; only
// the operator writes. A restart past the quota answers 409
// QUOTA_EXCEEDED with the quota, the use and the ask.
func TestGPUQuotasREST(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := newTypesEnv(t, st)
		put := func(token, org, model, body string) (int, []byte) {
			return env.Do("PUT", "/v1/organizations/"+org+"/gpu-quotas/"+model, token, []byte(body), nil)
		}
		if s, b := put("acme-ops", "org-acme", "h100-80gb", `{"limit": 4}`); s != 201 || !strings.Contains(string(b), `"organizationId":"org-acme","gpuModelId":"h100-80gb","gpuModelName":"NVIDIA H100 80GB HBM3","limit":4,"used":3,`) {
			t.Fatalf("set: %d %s", s, b)
		}
		if s, b := put("acme-ops", "org-acme", "h100-80gb", `{"limit": 3}`); s != 200 || !strings.Contains(string(b), `"limit":3,"used":3,`) {
			t.Fatalf("replace: %d %s", s, b)
		}
		s, b := env.Do("POST", "/v1/vms/vm-acme-2/restart", "acme-operator", nil, nil)
		if want := `{"error":{"code":"QUOTA_EXCEEDED","message":"GPU quota for NVIDIA H100 80GB HBM3 is 3; 3 in use, 1 asked","requestId":"servertest"}}` + "\n"; s != 409 || string(b) != want {
			t.Errorf("restart past the quota: %d %s", s, b)
		}
		s, b = env.Do("GET", "/v1/organizations/org-acme/gpu-quotas", "acme-reader", nil, nil)
		if s != 200 || !strings.HasPrefix(string(b), `{"gpuQuotas":[{"organizationId":"org-acme","gpuModelId":"h100-80gb","gpuModelName":"NVIDIA H100 80GB HBM3","limit":3,"used":3,"updatedAt":"`) {
			t.Errorf("acme reads its own: %d %s", s, b)
		}
		s, b = env.Do("GET", "/v1/organizations/org-acme/gpu-quotas", "globex-operator", nil, nil)
		if want := `{"error":{"code":"ORGANIZATION_NOT_FOUND","message":"there is no organization \"org-acme\"","requestId":"servertest"}}` + "\n"; s != 404 || string(b) != want {
			t.Errorf("globex reads acme's: %d %s", s, b)
		}
		if s, b := env.Do("GET", "/v1/organizations/org-globex/gpu-quotas", "globex-operator", nil, nil); s != 200 || string(b) != `{"gpuQuotas":[]}`+"\n" {
			t.Errorf("globex reads its own: %d %s", s, b)
		}
		if s, b := put("globex-operator", "org-globex", "h100-80gb", `{"limit": 100}`); s != 403 || servertest.ErrorCode(t, b) != "FORBIDDEN" {
			t.Errorf("globex sets its own: %d %s", s, b)
		}
		if s, b := env.Do("DELETE", "/v1/organizations/org-acme/gpu-quotas/h100-80gb", "globex-operator", nil, nil); s != 403 || servertest.ErrorCode(t, b) != "FORBIDDEN" {
			t.Errorf("globex lifts acme's: %d %s", s, b)
		}
		for _, c := range []struct {
			org, model, body string
			status           int
			code             string
		}{
			{"org-acme", "h100-80gb", `{}`, 400, "BAD_REQUEST"},
			{"org-acme", "h100-80gb", `{"limit": -1}`, 400, "BAD_REQUEST"},
			{"org-acme", "h100-80gb", `{"limit": 1, "max": 2}`, 400, "BAD_REQUEST"},
			{"org-nope", "h100-80gb", `{"limit": 1}`, 404, "ORGANIZATION_NOT_FOUND"},
			{"org-acme", "b200", `{"limit": 1}`, 404, "GPU_MODEL_NOT_FOUND"},
		} {
			if s, b := put("acme-ops", c.org, c.model, c.body); s != c.status || servertest.ErrorCode(t, b) != c.code {
				t.Errorf("PUT %s/%s %s: %d %s", c.org, c.model, c.body, s, b)
			}
		}
		if s, b := env.Do("DELETE", "/v1/organizations/org-acme/gpu-quotas/h100-80gb", "acme-ops", nil, nil); s != 204 || len(b) != 0 {
			t.Errorf("lift: %d %s", s, b)
		}
		if s, b := env.Do("DELETE", "/v1/organizations/org-acme/gpu-quotas/h100-80gb", "acme-ops", nil, nil); s != 404 || servertest.ErrorCode(t, b) != "QUOTA_NOT_FOUND" {
			t.Errorf("lift again: %d %s", s, b)
		}
		if s, b := env.Do("POST", "/v1/vms/vm-acme-2/restart", "acme-operator", nil, nil); s != 200 {
			t.Errorf("restart once the quota is lifted: %d %s", s, b)
		}
	})
}

// GPU quotas on GraphQL: setGpuQuota, gpuQuotas (the caller's own by
// default), deleteGpuQuota, and restartVm's QUOTA_EXCEEDED.
func TestGPUQuotasGraphQL(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := newTypesEnv(t, st)
		r := env.GraphQL("acme-ops", `mutation { setGpuQuota(organizationId: "org-globex", gpuModelId: "h100-80gb", limit: 2) { organizationId gpuModel { id } limit used } }`, nil)
		if len(r.Errors) > 0 || string(r.Data) != `{"setGpuQuota":{"organizationId":"org-globex","gpuModel":{"id":"h100-80gb"},"limit":2,"used":2}}` {
			t.Fatalf("set: %s %+v", r.Data, r.Errors)
		}
		r = env.GraphQL("globex-operator", `{ gpuQuotas { gpuModel { name } limit used } }`, nil)
		if len(r.Errors) > 0 || string(r.Data) != `{"gpuQuotas":[{"gpuModel":{"name":"NVIDIA H100 80GB HBM3"},"limit":2,"used":2}]}` {
			t.Errorf("globex's own: %s %+v", r.Data, r.Errors)
		}
		if r := env.GraphQL("acme-operator", `{ gpuQuotas(organizationId: "org-globex") { limit } }`, nil); r.Code() != "ORGANIZATION_NOT_FOUND" {
			t.Errorf("acme reads globex's: %s %+v", r.Data, r.Errors)
		}
		if r := env.GraphQL("globex-operator", `mutation { setGpuQuota(organizationId: "org-globex", gpuModelId: "h100-80gb", limit: 9) { limit } }`, nil); r.Code() != "FORBIDDEN" {
			t.Errorf("globex sets its own: %+v", r.Errors)
		}
		r = env.GraphQL("acme-ops", `mutation { setGpuQuota(organizationId: "org-acme", gpuModelId: "h100-80gb", limit: 3) { limit } }`, nil)
		if len(r.Errors) > 0 {
			t.Fatal(r.Errors)
		}
		r = env.GraphQL("acme-operator", `mutation { restartVm(id: "vm-acme-2") { status } }`, nil)
		if r.Code() != "QUOTA_EXCEEDED" || r.Errors[0].Message != "GPU quota for NVIDIA H100 80GB HBM3 is 3; 3 in use, 1 asked" || r.Errors[0].Extensions["status"] != float64(http.StatusConflict) {
			t.Errorf("restartVm past the quota: %+v", r.Errors)
		}
		if r := env.GraphQL("acme-ops", `mutation { deleteGpuQuota(organizationId: "org-acme", gpuModelId: "h100-80gb") }`, nil); len(r.Errors) > 0 || string(r.Data) != `{"deleteGpuQuota":true}` {
			t.Errorf("lift: %s %+v", r.Data, r.Errors)
		}
	})
}
