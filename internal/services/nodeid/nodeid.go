package nodeid

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/auth"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/lib/bounds"
	"gpugraph/internal/store"
)

// BootstrapTTL is how long a bootstrap token may be exchanged.
const BootstrapTTL = 24 * time.Hour

// Codes of node identity's refusals.
const (
	CodeNodeInOtherCluster = "NODE_IN_OTHER_CLUSTER"
	CodeBootstrapRefused   = "BOOTSTRAP_TOKEN_REFUSED"
	CodeCredentialRefused  = "NODE_CREDENTIAL_REFUSED"
)

// Identity is a node credential's holder: the node it may report.
type Identity struct {
	NodeName  string
	ClusterID string
}

// Enrolled is an enrollment as the operator sees it, once.
type Enrolled struct {
	NodeName       string
	ClusterID      string
	BootstrapToken string
	ExpiresAt      time.Time
}

// Service is node identity for both faces and the command line.
type Service struct{ store *store.Store }

// New is the node identity service over st.
func New(st *store.Store) *Service { return &Service{store: st} }

// MayEnroll is the permission enrolling a node needs: nodes.admin, the
// fleet operator's. Enroll checks it first; a face that reads a body of its
// own before calling Enroll asks it first, so that a refusal answers
// before a bad body does.
func (s *Service) MayEnroll(c *auth.Caller) error { return c.Require(auth.NodesAdmin) }

// Enroll makes a one-time bootstrap token for the node named nodeName in
// cluster clusterID. A node that is already registered must be in that
// cluster: moving a node between clusters is not enrollment's to do.
func (s *Service) Enroll(ctx context.Context, caller *auth.Caller, nodeName, clusterID string) (*Enrolled, error) {
	if err := s.MayEnroll(caller); err != nil {
		return nil, err
	}
	if err := bounds.Name("nodeName", nodeName); err != nil {
		return nil, err
	}
	if err := bounds.Name("clusterId", clusterID); err != nil {
		return nil, err
	}
	cluster, known, err := s.store.NodeClusterByName(ctx, nodeName)
	if err != nil {
		return nil, err
	}
	if known && cluster != clusterID {
		return nil, apierr.Conflict(CodeNodeInOtherCluster, "node %s is registered in cluster %q, not %q", nodeName, cluster, clusterID)
	}
	token := agentapi.BootstrapTokenPrefix + auth.NewSecret()
	now := store.Now()
	e := store.Enrollment{TokenHash: auth.HashToken(token), NodeName: nodeName, ClusterID: clusterID,
		CreatedBy: caller.KeyID, CreatedAt: now, ExpiresAt: now.Add(BootstrapTTL)}
	if err := s.store.CreateEnrollment(ctx, e); err != nil {
		return nil, err
	}
	return &Enrolled{NodeName: nodeName, ClusterID: clusterID, BootstrapToken: token, ExpiresAt: e.ExpiresAt}, nil
}

// Register exchanges a bootstrap token for the node credential it was
// made for. The token is spent whatever follows; a lost answer means a new
// enrollment.
func (s *Service) Register(ctx context.Context, bootstrapToken string) (*agentapi.RegisterResponse, error) {
	if !strings.HasPrefix(bootstrapToken, agentapi.BootstrapTokenPrefix) {
		return nil, refused(CodeBootstrapRefused, "send a bootstrap token (%s…) from POST /v1/admin/nodes/enroll as the bearer token", agentapi.BootstrapTokenPrefix)
	}
	secret := agentapi.CredentialPrefix + auth.NewSecret()
	cred, err := s.store.RedeemEnrollment(ctx, auth.HashToken(bootstrapToken), auth.HashToken(secret), store.Now())
	switch {
	case errors.Is(err, store.ErrEnrollmentUnknown):
		return nil, refused(CodeBootstrapRefused, "unknown bootstrap token")
	case errors.Is(err, store.ErrEnrollmentUsed):
		return nil, refused(CodeBootstrapRefused, "this bootstrap token was already exchanged; a token works once: enroll the node again for a new one")
	case errors.Is(err, store.ErrEnrollmentExpired):
		return nil, refused(CodeBootstrapRefused, "this bootstrap token expired; enroll the node again for a new one")
	case err != nil:
		return nil, err
	}
	return &agentapi.RegisterResponse{NodeName: cred.NodeName, ClusterID: cred.ClusterID, Credential: secret}, nil
}

// IsCredential reports whether a bearer token is a node credential (by its
// prefix); anything else is looked up as an API key.
func IsCredential(token string) bool { return strings.HasPrefix(token, agentapi.CredentialPrefix) }

// Authenticate answers the node a credential names, or a 401.
func (s *Service) Authenticate(ctx context.Context, credential string) (*Identity, error) {
	cred, ok, err := s.store.NodeCredentialByHash(ctx, auth.HashToken(credential))
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, refused(CodeCredentialRefused, "unknown node credential (it was replaced when the node was enrolled again?)")
	}
	return &Identity{NodeName: cred.NodeName, ClusterID: cred.ClusterID}, nil
}

// HasCredential reports whether the node named name has a credential, so
// that API keys may no longer report it.
func (s *Service) HasCredential(ctx context.Context, name string) (bool, error) {
	return s.store.NodeHasCredential(ctx, name)
}

func refused(code, format string, args ...any) *apierr.Error {
	return apierr.New(http.StatusUnauthorized, code, format, args...)
}
