package nodes

import (
	"context"
	"log/slog"
	"sync"

	"gpugraph/agentapi"
	"gpugraph/apierr"
	"gpugraph/auth"
	"gpugraph/nodeid"
	"gpugraph/store"
)

// Reporter is who sent a report: a node credential's holder, or (legacy
// mode only) an API key holding nodes.report.
type Reporter struct {
	Node   *nodeid.Identity // set when the report came with a node credential
	Caller *auth.Caller     // the API key otherwise; nil when none was valid
	// KeysAccepted is the legacy mode (--node-credentials-required=false):
	// an API key holding nodes.report may report a node that has no
	// credential — any organization's key, any such node, which is why it
	// is not the default. Off (the zero value), only node credentials
	// report.
	KeysAccepted bool
}

// Codes of the identity checks.
const (
	CodeNodeIdentityMismatch   = "NODE_IDENTITY_MISMATCH"
	CodeNodeCredentialRequired = agentapi.CodeNodeCredentialRequired
	CodeStaleReport            = "STALE_REPORT"
	CodeInventoryShrinksHeld   = "INVENTORY_SHRINKS_HELD"
)

// howToGetACredential ends every refusal of an API key's report.
const howToGetACredential = "an operator enrolls the node (POST /v1/admin/nodes/enroll, GraphQL enrollNode or gpugraph nodes enroll) " +
	"for a one-time bootstrap token, and its agent exchanges it at start (--bootstrap-token)"

// credentialRequired refuses an API key or an access token where only node
// credentials report.
const credentialRequired = "this server accepts agent reports only with a node credential, never with an API key or an access token: " + howToGetACredential

// MayReport is the check that needs no report, made before the body is
// read: a node credential; in legacy mode, a key holding nodes.report.
// Without legacy mode anything but a node credential is refused whatever
// it holds — 401 when no valid key came either, 403 for an API key — with
// how to get a credential, since nodes.report would not help.
func (r Reporter) MayReport() error {
	switch {
	case r.Node != nil:
		return nil
	case !r.KeysAccepted && r.Caller == nil:
		e := apierr.Unauthorized(credentialRequired)
		e.Code = CodeNodeCredentialRequired
		return e
	case !r.KeysAccepted:
		return apierr.Refused(CodeNodeCredentialRequired, "%s", credentialRequired)
	}
	return r.Caller.Require(auth.NodesReport)
}

// admit checks that the reporter may report node name (in cluster, for an
// inventory; "" when the report names none) with sequence seq, and
// answers the cluster the report stands for.
//
// A credential reports only its own node and cluster and must carry a
// sequence. In legacy mode an API key with nodes.report may still report a
// node that has no credential (every agent before node identity did so);
// once a node has a credential, no key may report it.
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
			"node %s has a node credential; its reports must be made with it, not with an API key: %s", name, howToGetACredential)
	}
	return cluster, nil
}

// noteLegacy logs, once per node and process, that a node reports with
// an API key, so an operator migrating sees which agents are left (the
// legacy mode itself is warned about once, at start). Called after the
// report was accepted, so only registered nodes' names are kept.
func (r Reporter) noteLegacy(ctx context.Context, name string) {
	if r.Node != nil {
		return
	}
	if _, noted := legacyNoted.LoadOrStore(name, true); !noted {
		slog.InfoContext(ctx, "legacy mode: node reports with an API key; enroll it (POST /v1/admin/nodes/enroll) and run its agent with --bootstrap-token",
			"node", name, "key", r.Caller.KeyID)
	}
}

// legacyNoted holds the node names whose key reports were logged.
var legacyNoted sync.Map
