package clustersync

import (
	"context"
	"errors"
	"strings"
	"time"

	"gpugraph/internal/auth"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/lib/bounds"
	"gpugraph/internal/store"
)

// CredentialPrefix starts every cluster credential, so that the faces
// tell it from an API key or a node credential by its look alone.
const CredentialPrefix = "gpgcl_"

// Codes of the refusals.
const (
	CodeCredentialRefused    = "CLUSTER_CREDENTIAL_REFUSED"
	CodeCredentialRequired   = "CLUSTER_CREDENTIAL_REQUIRED"
	CodeClusterMismatch      = "CLUSTER_MISMATCH"
	CodeClusterOfOtherTenant = "CLUSTER_OF_OTHER_TENANT"
	CodeStaleSequence        = "STALE_SEQUENCE"
	CodeSequenceReused       = "SEQUENCE_REUSED"
	CodeProjectQuotaExceeded = "PROJECT_QUOTA_EXCEEDED"
)

// MaxTenantProjects bounds the projects a tenant's clusters may register,
// all together (projects are a tenant's, not a cluster's). Run:ai tenants
// have tens to hundreds; a batch that would take the tenant above it is
// refused whole (403, as Kubernetes' ResourceQuota answers "exceeded
// quota"): sync answers 409 for the sequence alone, which a connector
// resumes from.
const MaxTenantProjects = 10_000

// Identity is a cluster credential's holder.
type Identity struct {
	ClusterID string
	TenantID  int
}

// Enrolled is an enrollment as the operator sees it, once.
type Enrolled struct {
	ClusterID  string
	TenantID   int
	Credential string
	EnrolledAt time.Time
}

// Service is cluster credentials and ingestion for the faces and the
// command line.
type Service struct{ store *store.Store }

// New is the service over st.
func New(st *store.Store) *Service { return &Service{store: st} }

// MayEnroll is the permission enrolling and revoking a cluster needs:
// nodes.admin, the fleet operator's, as for enrolling a node.
func (s *Service) MayEnroll(c *auth.Caller) error { return c.Require(auth.NodesAdmin) }

// Enroll makes a credential for cluster clusterID of Run:ai tenant
// tenantID, replacing the cluster's earlier one. A cluster stays the
// tenant it was first enrolled for. The id is a UUID, kept in lower case
// (CanonicalClusterID): its upper-case spelling is the same cluster.
func (s *Service) Enroll(ctx context.Context, caller *auth.Caller, clusterID string, tenantID int) (*Enrolled, error) {
	if err := s.MayEnroll(caller); err != nil {
		return nil, err
	}
	clusterID, err := CanonicalClusterID(clusterID)
	if err != nil {
		return nil, err
	}
	if tenantID <= 0 {
		return nil, apierr.BadRequest("tenantId %d must be a positive tenant id, an organization's", tenantID)
	}
	known, err := s.store.TenantExists(ctx, tenantID)
	if err != nil {
		return nil, err
	}
	if !known {
		return nil, apierr.BadRequest("tenantId %d is no organization's tenant", tenantID)
	}
	secret := CredentialPrefix + auth.NewSecret()
	now := store.Now()
	err = s.store.EnrollCluster(ctx, clusterID, tenantID, auth.HashToken(secret), caller.KeyID, now)
	if errors.Is(err, store.ErrClusterOfOtherTenant) {
		return nil, apierr.Conflict(CodeClusterOfOtherTenant,
			"cluster %q is enrolled for another tenant; a cluster's pods stay its tenant's: give this cluster another clusterId", clusterID)
	}
	if err != nil {
		return nil, err
	}
	return &Enrolled{ClusterID: clusterID, TenantID: tenantID, Credential: secret, EnrolledAt: now}, nil
}

// Revoke drops cluster clusterID's credential: its connector is refused
// from then on; what it reported stays. It answers the id as stored.
func (s *Service) Revoke(ctx context.Context, caller *auth.Caller, clusterID string) (string, error) {
	if err := s.MayEnroll(caller); err != nil {
		return "", err
	}
	clusterID, err := CanonicalClusterID(clusterID)
	if err != nil {
		return "", err
	}
	ok, err := s.store.RevokeCluster(ctx, clusterID)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", apierr.NotFound("CLUSTER_NOT_ENROLLED", "cluster %q has no credential", clusterID)
	}
	return clusterID, nil
}

// IsCredential reports whether a bearer token is a cluster credential.
func IsCredential(token string) bool { return strings.HasPrefix(token, CredentialPrefix) }

// Authenticate answers the cluster a bearer token is the credential of:
// a 401 for anything else (an API key writes no cluster's pods).
func (s *Service) Authenticate(ctx context.Context, bearer string) (*Identity, error) {
	if !IsCredential(bearer) {
		e := apierr.Unauthorized("send the cluster's credential (" + CredentialPrefix +
			"…, from POST /v1/admin/clusters/enroll or gpugraph clusters enroll) as the bearer token; an API key writes no cluster's pods")
		e.Code = CodeCredentialRequired
		return nil, e
	}
	c, ok, err := s.store.ClusterBySecret(ctx, auth.HashToken(bearer))
	if err != nil {
		return nil, err
	}
	if !ok {
		e := apierr.Unauthorized("unknown cluster credential (revoked, or replaced when the cluster was enrolled again?)")
		e.Code = CodeCredentialRefused
		return nil, e
	}
	return &Identity{ClusterID: c.ClusterID, TenantID: c.TenantID}, nil
}

// CanonicalClusterID answers a cluster id as it is stored and compared:
// Run:ai's cluster ids are UUIDs ("format: uuid"), which compare in any
// case, kept in lower case. Anything else is a 400.
func CanonicalClusterID(clusterID string) (string, error) {
	c, err := bounds.UUID("clusterId", clusterID)
	if err != nil {
		return "", apierr.BadRequest("clusterId %.40q must be a UUID (8-4-4-4-12 hex digits), as Run:ai's cluster ids are: the Pods API answers it as one", clusterID)
	}
	return c, nil
}
