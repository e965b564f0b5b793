package nodeid_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/auth"
	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/services/nodeid"
	"gpugraph/internal/store"
)

const cluster = "71f69d83-ba66-4822-adf5-55ce55efd210" // the fixture's nodes' cluster

// An enrollment's bootstrap token is exchanged once for a credential bound
// to the node's name and cluster, which then authenticates the node; a
// second enrollment replaces the credential.
func TestEnrollRegisterAuthenticate(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		svc := nodeid.New(st)
		before := store.Now()
		e, err := svc.Enroll(ctx, auth.SystemCaller(), "gpu-node-1", cluster)
		if err != nil {
			t.Fatal(err)
		}
		if e.NodeName != "gpu-node-1" || e.ClusterID != cluster || !strings.HasPrefix(e.BootstrapToken, agentapi.BootstrapTokenPrefix) ||
			e.ExpiresAt.Before(before.Add(nodeid.BootstrapTTL)) || e.ExpiresAt.After(store.Now().Add(nodeid.BootstrapTTL)) {
			t.Errorf("enrollment: %+v", e)
		}
		if has, err := svc.HasCredential(ctx, "gpu-node-1"); err != nil || has {
			t.Errorf("credential before the exchange: %v %v", has, err)
		}
		r, err := svc.Register(ctx, e.BootstrapToken)
		if err != nil {
			t.Fatal(err)
		}
		if r.NodeName != "gpu-node-1" || r.ClusterID != cluster || !nodeid.IsCredential(r.Credential) || nodeid.IsCredential(e.BootstrapToken) {
			t.Errorf("registration: %+v", r)
		}
		id, err := svc.Authenticate(ctx, r.Credential)
		if err != nil || *id != (nodeid.Identity{NodeName: "gpu-node-1", ClusterID: cluster}) {
			t.Errorf("authenticate: %+v %v", id, err)
		}
		if has, err := svc.HasCredential(ctx, "gpu-node-1"); err != nil || !has {
			t.Errorf("credential after the exchange: %v %v", has, err)
		}
		if has, _ := svc.HasCredential(ctx, "gpu-node-2"); has {
			t.Error("gpu-node-2 has a credential it was never given")
		}

		_, err = svc.Register(ctx, e.BootstrapToken)
		datasettest.WantError(t, err, 401, nodeid.CodeBootstrapRefused, "this bootstrap token was already exchanged; a token works once: enroll the node again for a new one")

		again, err := svc.Enroll(ctx, auth.SystemCaller(), "gpu-node-1", cluster)
		if err != nil {
			t.Fatal(err)
		}
		r2, err := svc.Register(ctx, again.BootstrapToken)
		if err != nil {
			t.Fatal(err)
		}
		_, err = svc.Authenticate(ctx, r.Credential)
		datasettest.WantError(t, err, 401, nodeid.CodeCredentialRefused, "unknown node credential (it was replaced when the node was enrolled again?)")
		if _, err := svc.Authenticate(ctx, r2.Credential); err != nil {
			t.Errorf("the new credential: %v", err)
		}
	})
}

// Enrollment refuses a node in another cluster than its own and a bad
// name; registration refuses what is no bootstrap token, an unknown one
// and an expired one.
func TestEnrollAndRegisterRefuse(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		svc := nodeid.New(st)
		op := auth.SystemCaller()
		_, err := svc.Enroll(ctx, op, "gpu-node-1", "other-cluster")
		datasettest.WantError(t, err, 409, nodeid.CodeNodeInOtherCluster, `node gpu-node-1 is registered in cluster "`+cluster+`", not "other-cluster"`)
		_, err = svc.Enroll(ctx, op, "gpu node", cluster)
		datasettest.WantError(t, err, 400, "BAD_REQUEST", `nodeName "gpu node" must be 1 to 253 bytes of printable UTF-8 without spaces`)
		_, err = svc.Enroll(ctx, op, "gpu-node-9", "")
		datasettest.WantError(t, err, 400, "BAD_REQUEST", `clusterId "" must be 1 to 253 bytes of printable UTF-8 without spaces`)
		// A node the fleet does not know yet may be enrolled in any cluster.
		if _, err := svc.Enroll(ctx, op, "gpu-node-9", "other-cluster"); err != nil {
			t.Errorf("enroll a new node: %v", err)
		}

		_, err = svc.Register(ctx, "acme-agent")
		datasettest.WantError(t, err, 401, nodeid.CodeBootstrapRefused, "send a bootstrap token ("+agentapi.BootstrapTokenPrefix+"…) from POST /v1/admin/nodes/enroll as the bearer token")
		_, err = svc.Register(ctx, agentapi.BootstrapTokenPrefix+"nonsense")
		datasettest.WantError(t, err, 401, nodeid.CodeBootstrapRefused, "unknown bootstrap token")

		// An enrollment made two hours ago, whose token expired an hour ago.
		const expired = agentapi.BootstrapTokenPrefix + "expired"
		made := store.Now().Add(-2 * time.Hour)
		if err := st.CreateEnrollment(ctx, store.Enrollment{TokenHash: auth.HashToken(expired), NodeName: "gpu-node-2",
			ClusterID: cluster, CreatedBy: "cli", CreatedAt: made, ExpiresAt: made.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		_, err = svc.Register(ctx, expired)
		datasettest.WantError(t, err, 401, nodeid.CodeBootstrapRefused, "this bootstrap token expired; enroll the node again for a new one")
	})
}

// Enrolling needs nodes.admin, which no organization's key of the
// fixture holds: the 403 naming it and the 401 without a caller
// (before a bad name's 400).
func TestEnrollNeedsNodesAdmin(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		svc := nodeid.New(st)
		_, err := svc.Enroll(ctx, datasettest.Caller(t, st, "acme-agent"), "gpu-node-1", cluster)
		datasettest.WantError(t, err, 403, "FORBIDDEN", "this API key lacks the nodes.admin permission")
		_, err = svc.Enroll(ctx, nil, "gpu node", cluster)
		datasettest.WantError(t, err, 401, "UNAUTHENTICATED", "missing API key: send Authorization: Bearer <API key>")
	})
}
