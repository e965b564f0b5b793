package httpapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// seedKeys are the keys of the seed's pod object, in its order; brief
// answers end before projectName.
var seedKeys = []string{"name", "priorityClassName", "id", "workloadId", "revisionId", "clusterId",
	"projectId", "nodeName", "createdAt", "completedAt", "containers", "currentNodePool",
	"requestedNodePools", "requestedResources", "allocatedResources", "tolerations", "k8sPhase", "ip",
	"task", "nodeAffinity", "tenantId", "k8sPhaseUpdatedAt", "updatedAt", "deletedAt",
	"projectName", "workloadName"}

// objectKeys reads the keys of a JSON object in the order they are written.
func objectKeys(t *testing.T, raw []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s", raw)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// restPods answers the pods of a REST list by key, as raw JSON.
func restPods(t *testing.T, env *servertest.Env, token, path string) map[string]json.RawMessage {
	t.Helper()
	status, body := servertest.PodsGET(t, env, token, path)
	var l listBody
	if status != http.StatusOK || json.Unmarshal(body, &l) != nil {
		t.Fatalf("GET %s = %d %s", path, status, body)
	}
	out := map[string]json.RawMessage{}
	for _, p := range l.Pods {
		var x struct{ ID string }
		_ = json.Unmarshal(p, &x)
		out[keyOf(x.ID)] = p
	}
	return out
}

func decode(t *testing.T, raw []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	return v
}

// A pod loaded from a fixture comes back identical with verbosity=full, its
// keys in the seed's order; brief leaves out the two names.
func TestPodJSON(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, podsFixture(t))
		full := restPods(t, env, "acme-workloads", "/api/v1/workloads/pods?verbosity=full&limit=500")
		brief := restPods(t, env, "acme-workloads", "/api/v1/workloads/pods?verbosity=brief&limit=500")
		plain := restPods(t, env, "acme-workloads", "/api/v1/workloads/pods?limit=500")
		if len(full) != 7 || len(brief) != 7 || len(plain) != 7 {
			t.Fatalf("%d, %d, %d pods", len(full), len(brief), len(plain))
		}
		for key, want := range fullPods {
			if got := decode(t, full[key]); !reflect.DeepEqual(got, decode(t, []byte(want))) {
				t.Errorf("%s verbosity=full:\n got %s\nwant %s", key, full[key], want)
			}
			wantBrief := decode(t, []byte(want)).(map[string]any)
			delete(wantBrief, "projectName")
			delete(wantBrief, "workloadName")
			if got := decode(t, brief[key]); !reflect.DeepEqual(got, wantBrief) {
				t.Errorf("%s verbosity=brief: %s", key, brief[key])
			}
			if !bytes.Equal(plain[key], brief[key]) {
				t.Errorf("%s: default verbosity is not brief: %s", key, plain[key])
			}
		}
		for key := range full {
			if got := objectKeys(t, full[key]); !reflect.DeepEqual(got, seedKeys) {
				t.Errorf("%s full keys %v", key, got)
			}
			if got := objectKeys(t, brief[key]); !reflect.DeepEqual(got, seedKeys[:24]) {
				t.Errorf("%s brief keys %v", key, got)
			}
		}
		// A pod the fixture gave only its required fields: unknown values
		// are null, lists empty, and times in milliseconds.
		want := `{"name": "Zeta_1", "priorityClassName": "low", "id": "00000000-0000-4000-8000-000000000002",
			"workloadId": "` + w1 + `", "revisionId": null, "clusterId": "` + c1 + `", "projectId": "1",
			"nodeName": "gpu-node-2", "createdAt": "2024-01-01T01:00:00.000Z", "completedAt": "2024-01-01T05:00:00.000Z",
			"containers": [], "currentNodePool": "pool-b", "requestedNodePools": [], "requestedResources": null,
			"allocatedResources": null, "tolerations": [], "k8sPhase": "Succeeded", "ip": null, "task": null,
			"nodeAffinity": {"required": null, "preferred": null}, "tenantId": 1001,
			"k8sPhaseUpdatedAt": "2024-01-01T01:00:00.000Z", "updatedAt": "2024-01-01T01:00:00.000Z", "deletedAt": null,
			"projectName": "vision", "workloadName": "resnet-train"}`
		if got := decode(t, full["p02"]); !reflect.DeepEqual(got, decode(t, []byte(want))) {
			t.Errorf("p02 full = %s", full["p02"])
		}
		// The other paths write the same object.
		for _, path := range []string{
			"/api/v1/workloads/" + w2 + "/pods?verbosity=full",
			"/api/v1/workloads/inferences/revisions/" + r1 + "/pods?verbosity=full",
		} {
			got := restPods(t, env, "acme-workloads", path)["p04"]
			if !reflect.DeepEqual(decode(t, got), decode(t, []byte(fullPods["p04"]))) {
				t.Errorf("%s: p04 = %s", path, got)
			}
		}
		deleted := restPods(t, env, "acme-workloads", "/api/v1/workloads/inferences/revisions/"+r1+"/pods?deleted=true")
		if got := objectKeys(t, deleted["p08"]); !reflect.DeepEqual(got, seedKeys[:24]) {
			t.Errorf("revision pod keys %v", got)
		}
		if !strings.Contains(string(deleted["p08"]), `"deletedAt":"2024-01-01T08:00:00.000Z"`) {
			t.Errorf("p08 = %s", deleted["p08"])
		}
	})
}

// The shared base fixture's pods, written from the seed's example, validate
// too: its "0B" is read as "0", the quantity the schema's pattern accepts.
func TestBasePodsValidate(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, servertest.Base)
		for _, path := range []string{
			"/api/v1/workloads/pods?verbosity=full&limit=500",
			"/api/v1/workloads/pods?deleted=true&verbosity=full",
			"/api/v1/workloads/11111111-1111-4111-8111-111111111111/pods?verbosity=full",
			"/api/v1/workloads/inferences/revisions/44444444-4444-4444-8444-444444444444/pods?verbosity=full",
			"/api/v1/workloads/pods/count",
		} {
			for _, token := range []string{"acme-operator", "globex-operator"} {
				if status, body := servertest.PodsGET(t, env, token, path); status != http.StatusOK && status != http.StatusNotFound {
					t.Errorf("%s as %s: %d %s", path, token, status, body)
				}
			}
		}
		all := restPods(t, env, "acme-operator", "/api/v1/workloads/pods?limit=500")
		for key, p := range all {
			if strings.Contains(string(p), `"0B"`) {
				t.Errorf("%s: %s", key, p)
			}
		}
	})
}
