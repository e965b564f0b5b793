// Package auth turns a bearer API key into the caller: its organization, its
// Run:ai tenant and its permissions. Keys are stored as SHA-256 hashes only.
package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"time"

	"gpugraph/apierr"
	"gpugraph/models"
	"gpugraph/store"
)

// The permissions of the auth contract (docs/contract.md).
const (
	ComputeRead    = "compute.read"
	ComputeOperate = "compute.operate"
	WorkloadsRead  = "workloads.read"
	MetricsWrite   = "metrics.write"
	NodesReport    = "nodes.report"
	// NodesAdmin is the fleet operator's: decommission and reclaim nodes,
	// change an organization's state. A key holding it acts on the whole
	// fleet, whatever its own organization (the platform operator's).
	NodesAdmin = "nodes.admin"
)

// Permissions lists every permission a key may hold.
var Permissions = []string{ComputeRead, ComputeOperate, WorkloadsRead, MetricsWrite, NodesReport, NodesAdmin}

// implied lists what a permission grants besides itself.
var implied = map[string][]string{ComputeOperate: {ComputeRead}}

// Caller is who sent a request.
type Caller struct {
	// KeyID names the key in logs and the event log: the first 12 hex
	// digits of its hash, which say nothing of the key itself.
	KeyID             string
	OrganizationID    string
	TenantID          int
	InfinibandEnabled bool
	// OrganizationState is the organization's state at key lookup: an
	// active or balance-exhausted one (suspended and deleted ones' keys are
	// refused before a caller exists).
	OrganizationState models.OrgState
	// LookedUpAt is when the key was read: a change of credentials
	// notified after it may not be in what was read.
	LookedUpAt time.Time
	perms      map[string]bool
	// tokenHash is the key's stored hash, kept so a long-lived stream can
	// ask again whether the key still stands (Authenticator.Recheck).
	tokenHash string
}

// Can reports whether the caller holds perm.
func (c *Caller) Can(perm string) bool { return c != nil && c.perms[perm] }

// HashToken is how a key is stored and looked up.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// ValidPermission reports whether p is a permission of the auth contract (docs/contract.md).
func ValidPermission(p string) bool {
	for _, q := range Permissions {
		if p == q {
			return true
		}
	}
	return false
}

type ctxKey struct{}

// WithCaller puts c in ctx.
func WithCaller(ctx context.Context, c *Caller) context.Context {
	return context.WithValue(ctx, ctxKey{}, c)
}

// FromContext answers the caller of this request, nil when unauthenticated.
func FromContext(ctx context.Context) *Caller {
	c, _ := ctx.Value(ctxKey{}).(*Caller)
	return c
}

// Require answers the caller when it holds perm, else the 401 or 403 error.
func Require(ctx context.Context, perm string) (*Caller, error) {
	c, err := Authenticate(ctx)
	if err != nil {
		return nil, err
	}
	if !c.Can(perm) {
		return nil, apierr.MissingPermission(perm)
	}
	return c, nil
}

// Authenticator resolves keys against the store.
type Authenticator struct{ Store *store.Store }

// Lookup finds the caller owning token, or a 401.
func (a *Authenticator) Lookup(ctx context.Context, token string) (*Caller, error) {
	if token == "" {
		return nil, apierr.Unauthorized("missing API key: send Authorization: Bearer <API key>")
	}
	return a.lookupHash(ctx, HashToken(token))
}

// Recheck answers the caller c's key as it stands now, through the same
// checks as Lookup: a 401 when the key is gone (revoked), the 403 of
// OrganizationRefused when its organization was suspended or deleted since.
// Open streams call it when credentials change and on a timer.
func (a *Authenticator) Recheck(ctx context.Context, c *Caller) (*Caller, error) {
	if c == nil || c.tokenHash == "" {
		return nil, apierr.Unauthorized("unknown API key")
	}
	return a.lookupHash(ctx, c.tokenHash)
}

func (a *Authenticator) lookupHash(ctx context.Context, hash string) (*Caller, error) {
	start := time.Now()
	row, ok, err := a.Store.APIKeyByHash(ctx, hash)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apierr.Unauthorized("unknown API key")
	}
	if err := OrganizationRefused(row.OrganizationID, row.OrgState); err != nil {
		return nil, err
	}
	c := newCaller(row.OrganizationID, row.TenantID, row.InfinibandEnabled, strings.Fields(row.Permissions))
	c.KeyID = keyID(row.TokenHash)
	c.OrganizationState = row.OrgState
	c.tokenHash = row.TokenHash
	c.LookedUpAt = start
	return c, nil
}

// BearerToken reads the API key of a request ("" when there is none).
func BearerToken(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

// Actor is the caller as the event log names it.
func (c *Caller) Actor() models.Actor {
	return models.Actor{Kind: models.ActorUser, ID: "key:" + c.KeyID}
}

func keyID(hash string) string {
	if len(hash) > 12 {
		return hash[:12]
	}
	return hash
}

// newCaller is the caller holding perms and what they imply.
func newCaller(orgID string, tenantID int, infiniband bool, perms []string) *Caller {
	c := &Caller{OrganizationID: orgID, TenantID: tenantID, InfinibandEnabled: infiniband, perms: map[string]bool{}}
	for _, p := range perms {
		c.perms[p] = true
		for _, q := range implied[p] {
			c.perms[q] = true
		}
	}
	return c
}
