package clusterbatch_test

import (
	"errors"
	"net/http"
	"testing"

	"gpugraph/apierr"
	"gpugraph/clusterbatch"
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
	f.Fuzz(func(t *testing.T, body []byte) {
		b, err := clusterbatch.Parse(body)
		if err == nil {
			if b.Sequence <= 0 || (b.Kind != clusterbatch.KindSnapshot && b.Kind != clusterbatch.KindDelta) || len(b.Pods) > clusterbatch.MaxPods {
				t.Fatalf("accepted %+v", b)
			}
			return
		}
		var e *apierr.Error
		if !errors.As(err, &e) || e.Status != http.StatusBadRequest || e.Message == "" {
			t.Fatalf("refusal %v is not a 400 with a message", err)
		}
	})
}
