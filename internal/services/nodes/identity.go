package nodes

import (
	"context"
	"log/slog"
	"sync"

	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/auth"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/services/compute"
	"gpugraph/internal/services/nodeid"
	"gpugraph/internal/store"
)

// Reporter is who sent a report: a node credential's holder, or (legacy
// mode only) an API key holding nodes.report.
type Reporter struct {
	Node   *nodeid.Identity // set when the report came with a node credential
	Caller *auth.Caller     // the API key otherwise; nil when none was valid
}

// Service is the node agent's reports for the REST face.
type Service struct {
	store   *store.Store
	compute *compute.Service
	ids     *nodeid.Service
	// keysAccepted is the legacy mode (--node-credentials-required=false):
	// an API key holding nodes.report may report a node that has no
	// credential — any organization's key, any such node, which is why it
	// is not the default. Off, only node credentials report.
	keysAccepted bool
}

// Options are how a Service takes reports.
type Options struct {
	// KeysAccepted turns the legacy mode on (Service.keysAccepted); the
	// zero value accepts node credentials only.
	KeysAccepted bool
}

// New is the reports service over st: it re-submits through cs the pods a
// heartbeat says lost their job, and resolves node credentials through ids.
func New(st *store.Store, cs *compute.Service, ids *nodeid.Service, o Options) *Service {
	return &Service{store: st, compute: cs, ids: ids, keysAccepted: o.KeysAccepted}
}

// Identify answers who sent a report whose bearer token is bearer: the
// node a node credential names (a 401 for an unknown one), or else the
// request's caller c, nil when its key was refused with keyErr. It refuses
// what may not report at all (MayReport), so a face calls it before it
// reads the body (401/403 before 400). In legacy mode a refused key
// answers keyErr, as on every path that takes keys.
func (s *Service) Identify(ctx context.Context, bearer string, c *auth.Caller, keyErr error) (Reporter, error) {
	if nodeid.IsCredential(bearer) {
		id, err := s.ids.Authenticate(ctx, bearer)
		if err != nil {
			return Reporter{}, err
		}
		return Reporter{Node: id}, nil
	}
	if keyErr != nil && s.keysAccepted {
		return Reporter{}, keyErr
	}
	who := Reporter{Caller: c}
	return who, s.MayReport(who)
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
func (s *Service) MayReport(r Reporter) error {
	switch {
	case r.Node != nil:
		return nil
	case !s.keysAccepted && r.Caller == nil:
		e := apierr.Unauthorized(credentialRequired)
		e.Code = CodeNodeCredentialRequired
		return e
	case !s.keysAccepted:
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
func (s *Service) admit(ctx context.Context, r Reporter, name, cluster string, seq int64) (string, error) {
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
	enrolled, err := s.ids.HasCredential(ctx, name)
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
