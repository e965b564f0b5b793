package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"gpugraph/internal/dataset"
	"gpugraph/internal/httpapi/rest/openapitest"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// Issue 18: what strict, generated clients trip on.

// TestPodMetricsLongRange: a range past ~292 years (time.Duration's
// reach) keeps its end point; steps are counted in int64 milliseconds.
func TestPodMetricsLongRange(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := newMetricsEnv(t, st)
		far := `{"podMetrics": [{"podId": "` + servertest.TrainPod1 + `", "type": "CPU_USAGE_CORES",
		  "samples": [["0001-01-01T00:00:00Z", "1"], ["9999-12-31T23:58:00Z", "2"]]}]}`
		if _, err := dataset.LoadFile(context.Background(), st, []byte(far)); err != nil {
			t.Fatal(err)
		}
		got := servertest.GetMetrics(t, env, http.StatusOK, servertest.MetricsPath(servertest.TrainWorkload, servertest.TrainPod1, "metricType", "CPU_USAGE_CORES",
			"start", "0001-01-01T00:00:00Z", "end", "9999-12-31T23:59:59.999Z", "numberOfSamples", "2"))
		want := servertest.JS(`{'measurements': [{'type': 'CPU_USAGE_CORES', 'labels': {}, 'values': [
			{'value': '1', 'timestamp': '0001-01-01T00:00:00.000Z'},
			{'value': '2', 'timestamp': '9999-12-31T23:59:59.999Z'}]}]}`)
		if got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	})
}

// basePod is servertest.Base's first pod with the changes given, as a
// fixture's {"pods": [...]}, plus extra top-level keys.
func basePod(t *testing.T, change func(p map[string]any), extra map[string]any) string {
	t.Helper()
	var base struct{ Pods []map[string]any }
	if err := json.Unmarshal([]byte(servertest.Base), &base); err != nil {
		t.Fatal(err)
	}
	p := base.Pods[0]
	change(p)
	f := map[string]any{"pods": []any{p}}
	for k, v := range extra {
		f[k] = v
	}
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCPUOnlyPodLeavesGPURequestTypeOut (item 1): an unknown
// gpuRequestType is left out, not null, which strict OpenAPI 3.0.3
// refuses for a nullable enum that does not list null. servertest checks
// every answer so; the test also checks the key and the strict validator.
func TestCPUOnlyPodLeavesGPURequestTypeOut(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, servertest.Base)
		cpuOnly := basePod(t, func(p map[string]any) {
			p["id"], p["name"] = "aaaaaaaa-0000-4000-8000-0000000000c0", "cpu-only-0"
			p["requestedResources"] = map[string]any{"gpuRequestType": nil, "gpu": nil, "gpuMemory": nil,
				"cpu": map[string]any{"limit": 2, "request": 1}, "cpuMemory": nil, "extendedResources": []any{}}
		}, nil)
		if _, err := dataset.LoadFile(context.Background(), st, []byte(cpuOnly)); err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{"/api/v1/workloads/pods?filterBy=name==cpu-only-0&verbosity=full",
			"/api/v1/workloads/" + servertest.TrainWorkload + "/pods?filterBy=name==cpu-only-0"} {
			status, body := env.Do(http.MethodGet, path, "acme-workloads", nil, nil)
			if status != http.StatusOK {
				t.Fatalf("GET %s: %d %s", path, status, body)
			}
			var list struct {
				Pods []struct {
					RequestedResources map[string]json.RawMessage `json:"requestedResources"`
				} `json:"pods"`
			}
			if err := json.Unmarshal(body, &list); err != nil || len(list.Pods) != 1 {
				t.Fatalf("GET %s: %s", path, body)
			}
			if v, ok := list.Pods[0].RequestedResources["gpuRequestType"]; ok {
				t.Errorf("GET %s: gpuRequestType present (%s), want it left out", path, v)
			}
			openapitest.Validate(t, "GET "+servertest.PodsOperation(path)+" 200", body)
			// The strict reading refuses the old answer.
			old := strings.Replace(string(body), `"requestedResources":{`, `"requestedResources":{"gpuRequestType":null,`, 1)
			if openapitest.Check("GET "+servertest.PodsOperation(path)+" 200", []byte(old)) == nil {
				t.Errorf("strict validator takes gpuRequestType: null")
			}
		}
	})
}

// TestPlainVMDoesNotTearDown (item 4): only a pod tears down, so a plain
// VM's tearingDown (set by a fixture) is cleared by a successful restart.
func TestPlainVMDoesNotTearDown(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		f := newWorld()
		addVM(f, vmSpec{id: "vm-td", node: "n6", status: "running", cpu: 4, ram: 16, disk: 50, tearingDown: true})
		addVM(f, vmSpec{id: "vm-td-stopped", node: "n6", status: "stopped", cpu: 4, ram: 16, disk: 50, tearingDown: true})
		env := servertest.New(t, st, fixtureJSON(t, f))
		for _, id := range []string{"vm-td", "vm-td-stopped"} {
			status, body := env.Do(http.MethodPost, "/v1/vms/"+id+"/restart", "acme-operator", nil, nil)
			if status != http.StatusOK || !strings.Contains(string(body), `"tearingDown":false`) {
				t.Errorf("restart %s: %d %s, want 200 with tearingDown false", id, status, body)
			}
			r := env.GraphQL("acme-operator", `query($id: ID!) { vm(id: $id) { tearingDown } }`, map[string]any{"id": id})
			if string(r.Data) != `{"vm":{"tearingDown":false}}` {
				t.Errorf("%s after restart: %s %+v", id, r.Data, r.Errors)
			}
		}
	})
}

// upperFixture is a workload, a revision and a pod whose UUIDs a fixture
// spells in upper case; the store keeps them in lower case.
const (
	upperWL  = "ABCDEF01-2345-4678-89AB-CDEF01234567"
	upperRev = "BBBBBBBB-CCCC-4DDD-8EEE-FFFFFFFFFFFF"
	upperPod = "AAAAAAAA-0000-4000-8000-0000000000FF"
)

// TestUUIDsCompareCaseInsensitively (item 5): an upper-case copy of a
// valid UUID finds what the UUID finds, on every path parameter, filterBy
// value and GraphQL argument that Run:ai's schema types "format: uuid";
// and offset above int32 is a 400 naming it.
func TestUUIDsCompareCaseInsensitively(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, servertest.Base)
		fixture := basePod(t, func(p map[string]any) {
			p["id"], p["name"], p["workloadId"], p["revisionId"] = upperPod, "upper-0", upperWL, upperRev
			p["clusterId"] = "71F69D83-BA66-4822-ADF5-55CE55EFD210"
		}, map[string]any{
			"workloads": []any{map[string]any{"id": upperWL, "name": "upper", "projectId": "1", "clusterId": "71F69D83-BA66-4822-ADF5-55CE55EFD210"}},
			"revisions": []any{map[string]any{"id": upperRev, "workloadId": upperWL}},
			"podMetrics": []any{map[string]any{"podId": upperPod, "type": "CPU_USAGE_CORES",
				"samples": []any{[]any{"2025-01-01T00:00:00Z", "1"}}}},
		})
		if _, err := dataset.LoadFile(context.Background(), st, []byte(fixture)); err != nil {
			t.Fatal(err)
		}
		lower := strings.ToLower
		mixed := func(s string) string { return lower(s[:18]) + s[18:] }
		for _, wl := range []string{upperWL, lower(upperWL), mixed(upperWL)} {
			keys, _ := restList(t, env, "acme-workloads", "/api/v1/workloads/"+wl+"/pods")
			if keys != "?"+lower(upperPod) {
				t.Errorf("workload %s: pods %q, want upper-0 (%s)", wl, keys, lower(upperPod))
			}
		}
		for _, rev := range []string{upperRev, lower(upperRev)} {
			status, body := servertest.PodsGET(t, env, "acme-workloads", "/api/v1/workloads/inferences/revisions/"+rev+"/pods")
			if status != http.StatusOK || !strings.Contains(string(body), `"id":"`+lower(upperPod)+`"`) ||
				!strings.Contains(string(body), `"workloadId":"`+lower(upperWL)+`"`) ||
				!strings.Contains(string(body), `"revisionId":"`+lower(upperRev)+`"`) {
				t.Errorf("revision %s: %d %s", rev, status, body)
			}
		}
		for filter, want := range map[string]int{
			"workloadId==" + upperWL:        1,
			"workloadId==" + lower(upperWL): 1,
			"revisionId=@BBBB-CCCC":         1,
			"workloadId!=" + upperWL:        3,
			"clusterId=^71F69D83":           4,
		} {
			if n := restCount(t, env, "acme-workloads", q("filterBy", filter)); n != want {
				t.Errorf("count filterBy=%s: %d, want %d", filter, n, want)
			}
		}
		got := servertest.GetMetrics(t, env, http.StatusOK, servertest.MetricsPath(upperWL, upperPod, "metricType", "CPU_USAGE_CORES",
			"start", "2025-01-01T00:00:00Z", "end", "2025-01-01T00:01:00Z", "numberOfSamples", "1"))
		if !strings.Contains(got, `"value":"1"`) {
			t.Errorf("metrics of the upper-case pod: %s", got)
		}
		r := env.GraphQL("acme-workloads", `query($w: ID!, $r: ID!) { workloadPods(workloadId: $w) { pods { id workloadId } }
			revisionPods(revisionId: $r) { id } }`, map[string]any{"w": upperWL, "r": upperRev})
		want := `{"workloadPods":{"pods":[{"id":"` + lower(upperPod) + `","workloadId":"` + lower(upperWL) + `"}]},"revisionPods":[{"id":"` + lower(upperPod) + `"}]}`
		if string(r.Data) != want {
			t.Errorf("GraphQL: %s %+v\nwant %s", r.Data, r.Errors, want)
		}

		// offset is int32 in Run:ai's schema.
		for path, wantStatus := range map[string]int{
			"/api/v1/workloads/pods?offset=2147483647":                 http.StatusOK,
			"/api/v1/workloads/pods?offset=2147483648":                 http.StatusBadRequest,
			"/api/v1/workloads/" + upperWL + "/pods?offset=9999999999": http.StatusBadRequest,
		} {
			status, body := servertest.PodsGET(t, env, "acme-workloads", path)
			if status != wantStatus || (status == http.StatusBadRequest && !strings.Contains(messageOf(t, body), "offset")) {
				t.Errorf("GET %s: %d %s, want %d", path, status, body, wantStatus)
			}
		}
	})
}

// TestIntrospectionDirectiveLocations (item 6): no directive lists a
// location the October 2021 spec lacks (DIRECTIVE_DEFINITION, which
// graphql-core before 3.2.11 cannot build a client schema from).
func TestIntrospectionDirectiveLocations(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, servertest.Base)
		r := env.GraphQL("acme-reader", `{ __schema { directives { name locations } } }`, nil)
		var data struct {
			Schema struct {
				Directives []struct {
					Name      string
					Locations []string
				}
			} `json:"__schema"`
		}
		env.Decode(r, &data)
		spec2021 := map[string]bool{}
		for _, l := range strings.Fields(`QUERY MUTATION SUBSCRIPTION FIELD FRAGMENT_DEFINITION FRAGMENT_SPREAD
			INLINE_FRAGMENT VARIABLE_DEFINITION SCHEMA SCALAR OBJECT FIELD_DEFINITION ARGUMENT_DEFINITION INTERFACE
			UNION ENUM ENUM_VALUE INPUT_OBJECT INPUT_FIELD_DEFINITION`) {
			spec2021[l] = true
		}
		found := false
		for _, d := range data.Schema.Directives {
			for _, l := range d.Locations {
				if !spec2021[l] {
					t.Errorf("@%s lists %s, which the October 2021 spec (and graphql-core 3.2) lacks", d.Name, l)
				}
			}
			if d.Name == "deprecated" {
				found = true
				if got := strings.Join(d.Locations, " "); got != "FIELD_DEFINITION ARGUMENT_DEFINITION INPUT_FIELD_DEFINITION ENUM_VALUE" {
					t.Errorf("@deprecated on %s", got)
				}
			}
		}
		if !found {
			t.Errorf("no @deprecated in %s", r.Data)
		}
	})
}
