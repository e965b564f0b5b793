package clustersync_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"gpugraph/internal/auth"
	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/services/clustersync"
	"gpugraph/internal/store"
)

const (
	cluster  = "cccccccc-0000-4000-8000-0000000000c1"
	workload = "aaaaaaaa-0000-4000-8000-0000000000c1"
)

// batch is a delta of sequence seq with one pod of the cluster in phase.
func batch(seq int, phase string) []byte {
	pod := map[string]any{
		"name": "train-0", "id": "bbbbbbbb-0000-4000-8000-0000000000c1", "workloadId": workload, "revisionId": nil,
		"projectId": "7", "task": nil, "clusterId": cluster, "nodeName": "node-1", "createdAt": "2026-03-01T10:00:00Z",
		"completedAt": nil, "containers": []any{}, "currentNodePool": nil, "requestedNodePools": []string{},
		"requestedResources": nil, "allocatedResources": nil, "tolerations": []any{}, "k8sPhase": phase,
		"k8sPhaseUpdatedAt": "2026-03-01T10:00:05Z", "ip": nil, "nodeAffinity": nil, "priorityClassName": "", "deletedAt": nil,
	}
	b, _ := json.Marshal(map[string]any{"sequence": seq, "kind": "delta",
		"projects":  []map[string]any{{"id": "7", "name": "team-7"}},
		"workloads": []map[string]any{{"id": workload, "name": "train", "projectId": "7"}},
		"pods":      []any{pod}})
	return b
}

// A cluster's credential: enrolled by the operator, authenticating its
// connector, its batches applied in order, replayed, refused when reused
// or stale, revoked.
func TestEnrollSyncRevoke(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		svc := clustersync.New(st)
		ops := auth.SystemCaller()

		// The id is kept in lower case, whatever the spelling enrolled.
		e, err := svc.Enroll(ctx, ops, strings.ToUpper(cluster), 1001)
		if err != nil || e.ClusterID != cluster || e.TenantID != 1001 || !strings.HasPrefix(e.Credential, clustersync.CredentialPrefix) {
			t.Fatalf("enroll: %+v %v", e, err)
		}
		_, err = svc.Enroll(ctx, ops, cluster, 1002)
		datasettest.WantError(t, err, 409, clustersync.CodeClusterOfOtherTenant,
			`cluster "`+cluster+`" is enrolled for another tenant; a cluster's pods stay its tenant's: give this cluster another clusterId`)
		_, err = svc.Enroll(ctx, ops, "cluster-1", 1001)
		if a, _ := apierr.As(err); a.Status != 400 || !strings.HasPrefix(a.Message, `clusterId "cluster-1" must be a UUID`) {
			t.Errorf("a cluster id not a UUID: %v", err)
		}
		_, err = svc.Enroll(ctx, ops, cluster, 4242)
		datasettest.WantError(t, err, 400, apierr.BadRequestCode, "tenantId 4242 is no organization's tenant")

		// An API key is no cluster credential; a made-up one is unknown.
		_, err = svc.Authenticate(ctx, "acme-reader")
		if a, _ := apierr.As(err); a.Status != 401 || a.Code != clustersync.CodeCredentialRequired {
			t.Errorf("an API key: %v", err)
		}
		_, err = svc.Authenticate(ctx, clustersync.CredentialPrefix+"nope")
		datasettest.WantError(t, err, 401, clustersync.CodeCredentialRefused,
			"unknown cluster credential (revoked, or replaced when the cluster was enrolled again?)")
		id, err := svc.Authenticate(ctx, e.Credential)
		if err != nil || id.ClusterID != cluster || id.TenantID != 1001 {
			t.Fatalf("authenticate: %+v %v", id, err)
		}

		first, err := svc.Sync(ctx, id, strings.ToUpper(cluster), batch(1, "Pending"))
		var a clustersync.Answer
		if err != nil || json.Unmarshal(first, &a) != nil || a.Sequence != 1 || a.PodsCreated != 1 || a.Workloads != 1 || a.Projects != 1 {
			t.Fatalf("sequence 1: %s %v", first, err)
		}
		// The last batch again answers the same bytes and changes nothing.
		again, err := svc.Sync(ctx, id, cluster, batch(1, "Pending"))
		if err != nil || string(again) != string(first) {
			t.Errorf("replay: %s %v, want %s", again, err, first)
		}
		_, err = svc.Sync(ctx, id, cluster, batch(1, "Running"))
		wantSequence(t, err, clustersync.CodeSequenceReused, "1")
		if out, err := svc.Sync(ctx, id, cluster, batch(2, "Running")); err != nil || !strings.Contains(string(out), `"podsUpdated":1`) {
			t.Errorf("sequence 2: %s %v", out, err)
		}
		_, err = svc.Sync(ctx, id, cluster, batch(1, "Pending"))
		wantSequence(t, err, clustersync.CodeStaleSequence, "2")
		// The credential writes its own cluster only.
		_, err = svc.Sync(ctx, id, "cccccccc-0000-4000-8000-0000000000c2", batch(3, "Running"))
		if a, _ := apierr.As(err); a.Status != 403 || a.Code != clustersync.CodeClusterMismatch {
			t.Errorf("another cluster's path: %v", err)
		}

		if got, err := svc.Revoke(ctx, ops, strings.ToUpper(cluster)); err != nil || got != cluster {
			t.Fatalf("revoke: %q %v", got, err)
		}
		_, err = svc.Authenticate(ctx, e.Credential)
		datasettest.WantError(t, err, 401, clustersync.CodeCredentialRefused,
			"unknown cluster credential (revoked, or replaced when the cluster was enrolled again?)")
		_, err = svc.Revoke(ctx, ops, cluster)
		datasettest.WantError(t, err, 404, "CLUSTER_NOT_ENROLLED", fmt.Sprintf("cluster %q has no credential", cluster))

		// Enrolling and revoking need nodes.admin.
		reader := datasettest.Caller(t, st, "acme-reader")
		if _, err := svc.Enroll(ctx, reader, cluster, 1001); err == nil {
			t.Error("a reader enrolled a cluster")
		}
	})
}

// wantSequence checks a 409 that carries the cluster's current sequence
// in its details, so a connector resumes above it.
func wantSequence(t *testing.T, err error, code, current string) {
	t.Helper()
	a, ok := apierr.As(err)
	if !ok || a.Status != 409 || a.Code != code || a.Details != current {
		t.Errorf("%v: %+v, want 409 %s with details %s", err, a, code, current)
	}
}
