package nodes

import (
	"context"
	"log/slog"
	"sync"

	"gpugraph/apierr"
	"gpugraph/auth"
	"gpugraph/nodeid"
	"gpugraph/store"
)

// Reporter is who sent a report: a node credential's holder, or (the
// deprecated path) an API key holding nodes.report.
type Reporter struct {
	Node   *nodeid.Identity // set when the report came with a node credential
	Caller *auth.Caller     // the API key otherwise
	// KeysRefused closes the deprecated path: the server was started with
	// --node-credentials-required, so no API key reports any node, enrolled
	// or not. Without it an unenrolled node may still be reported by any
	// organization's nodes.report key, which is what enrolling closes.
	KeysRefused bool
}

// Codes of the identity checks.
const (
	CodeNodeIdentityMismatch   = "NODE_IDENTITY_MISMATCH"
	CodeNodeCredentialRequired = "NODE_CREDENTIAL_REQUIRED"
	CodeStaleReport            = "STALE_REPORT"
	CodeInventoryShrinksHeld   = "INVENTORY_SHRINKS_HELD"
)

// mayReport is the check that needs no report: a node credential, or a key
// holding nodes.report.
func (r Reporter) mayReport() error {
	if r.Node == nil && r.KeysRefused {
		return apierr.Refused(CodeNodeCredentialRequired,
			"this server accepts agent reports only with a node credential: enroll the node (POST /v1/admin/nodes/enroll) and run its agent with --bootstrap-token")
	}
	if r.Node == nil && !r.Caller.Can(auth.NodesReport) {
		return apierr.MissingPermission(auth.NodesReport)
	}
	return nil
}

// admit checks that the reporter may report node name (in cluster, for an
// inventory; "" when the report names none) with sequence seq, and
// answers the cluster the report stands for.
//
// A credential reports only its own node and cluster and must carry a
// sequence. An API key with nodes.report may still report a node that has
// no credential (every agent before node identity did so), logged as
// deprecated (noteDeprecated); once a node has a credential, no key may
// report it.
func (r Reporter) admit(ctx context.Context, st *store.Store, name, cluster string, seq int64) (string, error) {
	if seq < 0 {
		return "", apierr.BadRequest("sequence %d must not be negative", seq)
	}
	if id := r.Node; id != nil {
		switch {
		case name != id.NodeName:
			return "", apierr.Refused(CodeNodeIdentityMismatch,
				"this node credential is node %s's; it cannot report node %s", id.NodeName, name)
		case cluster != "" && cluster != id.ClusterID:
			return "", apierr.Refused(CodeNodeIdentityMismatch,
				"node %s's credential is bound to cluster %q; it cannot report cluster %q", id.NodeName, id.ClusterID, cluster)
		case seq == 0:
			return "", apierr.BadRequest("sequence is missing: a report made with a node credential carries one, greater than the last")
		}
		return id.ClusterID, nil
	}
	enrolled, err := nodeid.HasCredential(ctx, st, name)
	if err != nil {
		return "", err
	}
	if enrolled {
		return "", apierr.Refused(CodeNodeCredentialRequired,
			"node %s has a node credential; its reports must be made with it, not with an API key", name)
	}
	return cluster, nil
}

// noteDeprecated logs, once per node and process, that a node reports
// with an API key. Called after the report was accepted, so only
// registered nodes' names are kept.
func (r Reporter) noteDeprecated(ctx context.Context, name string) {
	if r.Node != nil {
		return
	}
	if _, warned := deprecatedWarned.LoadOrStore(name, true); !warned {
		slog.WarnContext(ctx, "deprecated: node reports with an API key; enroll it (POST /v1/admin/nodes/enroll) and run its agent with --bootstrap-token",
			"node", name, "key", r.Caller.KeyID)
	}
}

// deprecatedWarned holds the node names whose key reports were logged.
var deprecatedWarned sync.Map
