package clusterbatch_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gpugraph/internal/cluster/clusterbatch"
	"gpugraph/internal/lib/apierr"
	"gpugraph/models"
)

// Ids of a valid batch: Run:ai's schema has a pod's id, workloadId,
// revisionId and clusterId as UUIDs.
const (
	podID      = "bbbbbbbb-0000-4000-8000-000000000001"
	workloadID = "aaaaaaaa-0000-4000-8000-000000000001"
	revisionID = "dddddddd-0000-4000-8000-000000000001"
	clusterID  = "cccccccc-0000-4000-8000-00000000000a"
)

// podWith is a delta of one pod whose resources are set as the JSON
// members given (a valid pod otherwise).
func podWith(members string) []byte {
	pod := `{"id": "` + podID + `", "name": "p", "workloadId": "` + workloadID + `", "clusterId": "` + clusterID + `", "createdAt": "2026-01-01T00:00:00Z",
	 "k8sPhaseUpdatedAt": "2026-01-01T00:00:00Z", "k8sPhase": "Running", "containers": []` + members + `}`
	return []byte(`{"sequence": 1, "kind": "delta", "pods": [` + pod + `]}`)
}

// The server checks every resource quantity a connector sends: the error
// names the field and says what a good one looks like.
func TestResourceQuantities(t *testing.T) {
	cases := []struct{ name, members, want string }{
		{"good", `, "requestedResources": {"gpuRequestType": "portion", "gpu": {"request": 0.5, "limit": null},
		  "cpu": {"request": 0.25, "limit": 2}, "cpuMemory": {"request": "512Mi", "limit": "1Gi"}, "gpuMemory": {"request": "4000Mi", "limit": null},
		  "extendedResources": [{"resource": "example.com/fpga", "quantity": "2", "exclude": null}]},
		  "allocatedResources": {"gpu": 0.5, "cpu": 0.25, "cpuMemory": "512Mi", "gpuMemory": null, "extendedResources": null}`, ""},
		{"absent", `, "requestedResources": null, "allocatedResources": null`, ""},
		{"memory not a quantity", `, "requestedResources": {"cpuMemory": {"request": "lots"}}`,
			`pods[0].requestedResources.cpuMemory.request "lots" is not a quantity as Run:ai writes one`},
		{"memory a pattern Kubernetes refuses", `, "requestedResources": {"cpuMemory": {"limit": "1.2.3"}}`,
			`pods[0].requestedResources.cpuMemory.limit "1.2.3" is not a Kubernetes quantity`},
		{"negative memory", `, "allocatedResources": {"cpuMemory": "-1Gi"}`, `pods[0].allocatedResources.cpuMemory "-1Gi" must not be negative`},
		{"memory request over limit", `, "requestedResources": {"cpuMemory": {"request": "2Gi", "limit": "1Gi"}}`,
			`pods[0].requestedResources.cpuMemory.request 2Gi is more than its limit 1Gi`},
		{"negative cpu", `, "requestedResources": {"cpu": {"request": -1}}`, `pods[0].requestedResources.cpu.request -1 must be between 0 and 1.048576e+06`},
		{"gpu over the bound", `, "allocatedResources": {"gpu": 5000}`, `pods[0].allocatedResources.gpu 5000 must be between 0 and 1024`},
		{"gpu request over limit", `, "requestedResources": {"gpu": {"request": 2, "limit": 1}}`, `pods[0].requestedResources.gpu.request 2 is more than its limit 1`},
		{"unknown request type", `, "requestedResources": {"gpuRequestType": "slice"}`, `pods[0].requestedResources.gpuRequestType "slice" must be "portion", "memory" or absent`},
		{"extended without a name", `, "requestedResources": {"extendedResources": [{"quantity": "1"}]}`,
			`pods[0].requestedResources.extendedResources[0].resource is required`},
		{"extended quantity", `, "allocatedResources": {"extendedResources": [{"resource": "example.com/x", "quantity": "2 units"}]}`,
			`pods[0].allocatedResources.extendedResources[0].quantity "2 units" is not a quantity`},
		{"node pool empty", `, "requestedNodePools": [""]`, `pods[0].requestedNodePools[0] is required`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := clusterbatch.Parse(podWith(c.members))
			if c.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if out, _ := json.Marshal(b.Pods[0].RequestedResources); c.name == "good" && !strings.Contains(string(out), `"gpuMemory":{"limit":null,"request":"4000Mi"}`) {
					t.Errorf("read back as %s", out)
				}
				return
			}
			var e *apierr.Error
			if !errors.As(err, &e) || e.Status != http.StatusBadRequest || !strings.HasPrefix(e.Message, c.want) {
				t.Fatalf("got %v, want a 400 starting %q", err, c.want)
			}
		})
	}
}

// A batch's ids of Run:ai's "format: uuid" are UUIDs: another is a 400
// naming the member; one in upper case is read in lower case, as the
// server stores and compares them. A project's id is no UUID in Run:ai.
func TestBatchUUIDs(t *testing.T) {
	upper := strings.ToUpper
	cases := []struct{ name, body, want string }{
		{"pod id", strings.Replace(string(podWith("")), podID, "not-a-uuid-pod", 1), `pods[0].id "not-a-uuid-pod" is not a UUID (8-4-4-4-12 hex digits), as Run:ai's schema has it`},
		{"workloadId", strings.Replace(string(podWith("")), workloadID, "not-a-uuid-wl", 1), `pods[0].workloadId "not-a-uuid-wl" is not a UUID (8-4-4-4-12 hex digits), as Run:ai's schema has it`},
		{"revisionId", string(podWith(`, "revisionId": "r1"`)), `pods[0].revisionId "r1" is not a UUID (8-4-4-4-12 hex digits), as Run:ai's schema has it`},
		{"clusterId", strings.Replace(string(podWith("")), clusterID, "c", 1), `pods[0].clusterId "c" is not a UUID (8-4-4-4-12 hex digits), as Run:ai's schema has it`},
		{"braces", strings.Replace(string(podWith("")), podID, "{"+podID[:35]+"}", 1), `pods[0].id "{bbbbbbbb-0000-4000-8000-00000000000}" is not a UUID`},
		{"workload's id", `{"sequence": 1, "kind": "delta", "workloads": [{"id": "w1", "name": "w", "projectId": "1"}]}`,
			`workloads[0].id "w1" is not a UUID (8-4-4-4-12 hex digits), as Run:ai's schema has it`},
		{"tombstone", `{"sequence": 1, "kind": "delta", "deletedPodIds": ["` + podID + `", "gone"]}`,
			`deletedPodIds[1] "gone" is not a UUID (8-4-4-4-12 hex digits), as Run:ai's schema has it`},
		{"long", strings.Replace(string(podWith("")), podID, strings.Repeat("x", 5000), 1), `pods[0].id "` + strings.Repeat("x", 40) + `" is not a UUID`},
		{"a pod twice, in two cases", `{"sequence": 1, "kind": "delta", "deletedPodIds": ["` + podID + `", "` + upper(podID) + `"]}`,
			`deletedPodIds[1] "` + podID + `" names a pod the batch already holds`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := clusterbatch.Parse([]byte(c.body))
			var e *apierr.Error
			if !errors.As(err, &e) || e.Status != http.StatusBadRequest || !strings.HasPrefix(e.Message, c.want) {
				t.Fatalf("got %v, want a 400 starting %q", err, c.want)
			}
		})
	}

	body := `{"sequence": 1, "kind": "delta", "projects": [{"id": "1", "name": "team"}],
	 "workloads": [{"id": "` + upper(workloadID) + `", "name": "w", "projectId": "1"}], "deletedPodIds": ["` + upper(revisionID) + `"],
	 "pods": [` + strings.TrimSuffix(strings.TrimPrefix(string(podWith(`, "revisionId": "`+upper(revisionID)+`", "projectId": "1"`)), `{"sequence": 1, "kind": "delta", "pods": [`), `]}`) + `]}`
	for _, id := range []string{podID, workloadID, clusterID} {
		body = strings.ReplaceAll(body, id, upper(id))
	}
	b, err := clusterbatch.Parse([]byte(body))
	if err != nil {
		t.Fatalf("upper case refused: %v", err)
	}
	p := b.Pods[0]
	if p.ID != podID || p.WorkloadID != workloadID || p.ClusterID != clusterID || *p.RevisionID != revisionID ||
		b.Workloads[0].ID != workloadID || b.DeletedPodIDs[0] != revisionID || *p.ProjectID != "1" {
		t.Errorf("read as %s %s %s %s %s %s", p.ID, p.WorkloadID, p.ClusterID, *p.RevisionID, b.Workloads[0].ID, b.DeletedPodIDs[0])
	}
}

// Every text of a batch is what PostgreSQL's text holds: a NUL (or bytes
// that are not UTF-8) is a 400 naming the member, on either engine, in the
// body's decoding or, for a connector's pod, in CheckPod.
func TestBatchText(t *testing.T) {
	nul := func(member, value string) string {
		return string(podWith(`, "` + member + `": "` + value + `"`))
	}
	cases := []struct{ name, body, want string }{
		{"pod name", strings.Replace(string(podWith("")), `"name": "p"`, `"name": "a\u0000b"`, 1), "pods[0].name contains a NUL character"},
		{"k8sPhase", strings.Replace(string(podWith("")), `"Running"`, `"Run\u0000"`, 1), "pods[0].k8sPhase contains a NUL character"},
		{"priorityClassName", nul("priorityClassName", `a\u0000b`), "pods[0].priorityClassName contains a NUL character"},
		{"nodeName", nul("nodeName", `a\u0000b`), "pods[0].nodeName contains a NUL character"},
		{"ip", nul("ip", `10.0.0.1\u0000`), "pods[0].ip contains a NUL character"},
		{"container image", strings.Replace(string(podWith("")), `"containers": []`, `"containers": [{"name": "m", "image": "i\u0000", "startedAt": null}]`, 1),
			"pods[0].containers[0].image contains a NUL character"},
		{"project name", `{"sequence": 1, "kind": "delta", "projects": [{"id": "1", "name": "a\u0000b"}]}`, "projects[0].name contains a NUL character"},
		{"workload name", `{"sequence": 1, "kind": "delta", "workloads": [{"id": "` + workloadID + `", "name": "a\u0000b", "projectId": "1"}]}`,
			"workloads[0].name contains a NUL character"},
		{"a member name", `{"sequence": 1, "kind": "delta", "x\u0000": 1}`, "the batch holds a member name with a NUL character"},
		{"pod name not UTF-8", strings.Replace(string(podWith("")), `"name": "p"`, "\"name\": \"\xff\"", 1), "pods[0].name holds text that is not valid UTF-8"},
		{"nodeName a lone surrogate", nul("nodeName", `\udc00`), "pods[0].nodeName holds text that is not valid UTF-8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := clusterbatch.Parse([]byte(c.body))
			var e *apierr.Error
			if !errors.As(err, &e) || e.Status != http.StatusBadRequest || !strings.HasPrefix(e.Message, c.want) {
				t.Fatalf("got %v, want a 400 starting %q", err, c.want)
			}
		})
	}

	// A connector's pod, checked before it is sent.
	s := func(v string) *string { return &v }
	for _, c := range []struct {
		name string
		set  func(p *clusterbatch.Pod)
		want string
	}{
		{"name", func(p *clusterbatch.Pod) { p.Name = "a\x00" }, "pod.name contains a NUL character"},
		{"k8sPhase", func(p *clusterbatch.Pod) { p.K8sPhase = "\xff" }, "pod.k8sPhase is not valid UTF-8"},
		{"priorityClassName", func(p *clusterbatch.Pod) { p.PriorityClassName = "a\x00" }, "pod.priorityClassName contains a NUL character"},
		{"nodeName", func(p *clusterbatch.Pod) { p.NodeName = s("n\x00") }, "pod.nodeName contains a NUL character"},
		{"ip", func(p *clusterbatch.Pod) { p.IP = s("\x00") }, "pod.ip contains a NUL character"},
		{"id", func(p *clusterbatch.Pod) { p.ID = "p\x00" }, `pod.id "p\x00" is not a UUID (8-4-4-4-12 hex digits), as Run:ai's schema has it`},
	} {
		b, err := clusterbatch.Parse(podWith(""))
		if err != nil {
			t.Fatal(err)
		}
		c.set(&b.Pods[0])
		var e *apierr.Error
		if err := clusterbatch.CheckPod("pod", &b.Pods[0]); !errors.As(err, &e) || e.Status != http.StatusBadRequest || e.Message != c.want {
			t.Errorf("CheckPod, %s: got %v, want a 400 %q", c.name, err, c.want)
		}
	}
}

// TestPodKeys holds the batch's pod to the one declaration of the pod
// (models.Pod): its keys and the fields the server owns are the row's keys.
func TestPodKeys(t *testing.T) {
	keys := func(rt reflect.Type) []string {
		var out []string
		for i := range rt.NumField() {
			if name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ","); name != "-" {
				out = append(out, name)
			}
		}
		return out
	}
	serverOwned := []string{"tenantId", "updatedAt", "projectName", "workloadName"}
	batch := append(keys(reflect.TypeFor[clusterbatch.Pod]()), serverOwned...)
	row := keys(reflect.TypeFor[models.Pod]())
	slices.Sort(batch)
	slices.Sort(row)
	if !slices.Equal(batch, row) {
		t.Errorf("the batch's pod and the server's fields are %v, models.Pod has %v", batch, row)
	}
}
