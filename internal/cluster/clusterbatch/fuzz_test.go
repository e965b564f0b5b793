package clusterbatch_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"gpugraph/internal/cluster/clusterbatch"
	"gpugraph/internal/lib/apierr"
)

// FuzzParse: whatever the body, Parse answers a batch that passed every
// check or a 400, never a panic or another status.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"sequence": 1, "kind": "snapshot", "pods": []}`))
	f.Add([]byte(`{"sequence": 2, "kind": "delta", "deletedPodIds": ["a"], "more": false}`))
	f.Add([]byte(`{"sequence": 3, "kind": "delta", "projects": [{"id": "p", "name": "n"}], "workloads": [{"id": "w", "name": "n", "projectId": "p"}],
	 "pods": [{"id": "x", "name": "x", "workloadId": "w", "clusterId": "c", "createdAt": "2026-01-01T00:00:00Z",
	 "k8sPhaseUpdatedAt": "2026-01-01T00:00:00Z", "k8sPhase": "Running", "containers": [{"name": "m", "image": "i", "startedAt": null}]}]}`))
	f.Add([]byte(`{"sequence": 1, "kind": "delta", "pods": [{"nmae": 1}]}`))
	// Text PostgreSQL refuses, and ids that are no UUIDs or are in upper case.
	pod := `{"id": "bbbbbbbb-0000-4000-8000-000000000001", "name": "x", "workloadId": "AAAAAAAA-0000-4000-8000-000000000001",
	 "clusterId": "cccccccc-0000-4000-8000-00000000000a", "revisionId": "DDDDDDDD-0000-4000-8000-000000000001", "createdAt": "2026-01-01T00:00:00Z",
	 "k8sPhaseUpdatedAt": "2026-01-01T00:00:00Z", "k8sPhase": "Running", "nodeName": "n", "ip": "10.0.0.1", "priorityClassName": "p", "containers": []}`
	f.Add([]byte(`{"sequence": 4, "kind": "delta", "pods": [` + pod + `]}`))
	f.Add([]byte(`{"sequence": 4, "kind": "delta", "pods": [` + strings.Replace(pod, `"name": "x"`, `"name": "a\u0000b"`, 1) + `]}`))
	f.Add([]byte(`{"sequence": 4, "kind": "delta", "pods": [` + strings.Replace(pod, `"ip": "10.0.0.1"`, `"ip": "\ud800"`, 1) + `]}`))
	f.Add([]byte(`{"sequence": 4, "kind": "delta", "pods": [` + strings.Replace(pod, "bbbbbbbb-0000-4000-8000-000000000001", "not-a-uuid-pod", 1) + `]}`))
	f.Add([]byte(`{"sequence": 5, "kind": "delta", "projects": [{"id": "p\u0000", "name": "n"}], "deletedPodIds": ["X"]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		b, err := clusterbatch.Parse(body)
		if err == nil {
			if b.Sequence <= 0 || (b.Kind != clusterbatch.KindSnapshot && b.Kind != clusterbatch.KindDelta) || len(b.Pods) > clusterbatch.MaxPods {
				t.Fatalf("accepted %+v", b)
			}
			// What is accepted is what PostgreSQL stores as SQLite does: no
			// NUL, no invalid UTF-8, anywhere; its UUIDs in lower case.
			out, _ := json.Marshal(b)
			var all any
			if err := json.Unmarshal(out, &all); err != nil {
				t.Fatal(err)
			}
			if s, ok := notText(all); ok || !utf8.Valid(body) {
				t.Fatalf("%q accepted with %q", body, s)
			}
			for _, p := range b.Pods {
				ids := []string{p.ID, p.WorkloadID, p.ClusterID}
				if p.RevisionID != nil {
					ids = append(ids, *p.RevisionID)
				}
				for _, id := range ids {
					if len(id) != 36 || strings.ToLower(id) != id {
						t.Fatalf("%q accepted with id %q", body, id)
					}
				}
			}
			return
		}
		var e *apierr.Error
		if !errors.As(err, &e) || e.Status != http.StatusBadRequest || e.Message == "" {
			t.Fatalf("refusal %v is not a 400 with a message", err)
		}
	})
}

// notText finds a string, name or value, that holds a NUL.
func notText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, strings.IndexByte(x, 0) >= 0
	case []any:
		for _, e := range x {
			if s, ok := notText(e); ok {
				return s, true
			}
		}
	case map[string]any:
		for k, e := range x {
			if s, ok := notText(k); ok {
				return s, true
			}
			if s, ok := notText(e); ok {
				return s, true
			}
		}
	}
	return "", false
}
