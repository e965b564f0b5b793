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

	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/store"
	"gpugraph/models"
)

// The permissions of the auth contract (docs/contract.md).
const (
	ComputeRead    = "compute.read"
	ComputeOperate = "compute.operate"
	WorkloadsRead  = "workloads.read"
	// BillingRead reads the key's own organization's money: its balance,
	// burn rate, runway, usage, ledger and each workload's cost so far.
	// Nothing implies it: money is read with a permission of its own.
	BillingRead  = "billing.read"
	MetricsWrite = "metrics.write"
	// NodesReport lets a key report as a node agent, only on a server in
	// legacy mode (--node-credentials-required=false): by default agents
	// report with node credentials (package nodeid), never with a key.
	NodesReport = "nodes.report"
	// NodesAdmin is the fleet operator's: decommission and reclaim nodes,
	// change an organization's state. A key holding it acts on the whole
	// fleet, whatever its own organization (the platform operator's).
	NodesAdmin = "nodes.admin"
	// Admin administers the credentials of the key's own organization: API
	// keys and applications. With NodesAdmin too (the platform operator) it
	// reaches every organization and creates organizations.
	Admin = "admin"
)

// Permissions lists every permission a key may hold.
var Permissions = []string{ComputeRead, ComputeOperate, WorkloadsRead, BillingRead, MetricsWrite, NodesReport, NodesAdmin, Admin}

// implied lists what a permission grants besides itself.
var implied = map[string][]string{ComputeOperate: {ComputeRead}}

// Credential names a kind of credential as answers name it ("this access
// token lacks …"): a caller says which one it was admitted with.
type Credential string

// The kinds of credential a request may carry.
const (
	APIKey      Credential = "API key"
	AccessToken Credential = "access token"
	// NodeCredential is an agent's (package nodeid): it reports on the
	// agent's paths and is never a Caller.
	NodeCredential Credential = "node credential"
	// CommandLine is the administration commands' (SystemCaller).
	CommandLine Credential = "command line"
)

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
	// System is the command line's caller (gpugraph keys …): whoever
	// reaches the database directly administers every organization.
	System bool
	// Credential is the kind of credential the caller was admitted with.
	Credential Credential
	// LookedUpAt is when the credential was read: a change of credentials
	// notified after it may not be in what was read.
	LookedUpAt time.Time
	perms      map[string]bool
	// authn is the authenticator that admitted the caller, which rechecks
	// it (Recheck): the one that reads access tokens as well as keys.
	authn *Authenticator
	// bearer is the credential as sent, kept so a long-lived stream can
	// ask again whether it still stands (Authenticator.Recheck).
	bearer string
}

// SystemCaller is the caller of the administration commands.
func SystemCaller() *Caller {
	c := newCaller("", 0, false, Permissions)
	c.System, c.KeyID, c.Credential = true, "cli", CommandLine
	return c
}

// Permissions answers what the caller holds, implied ones included, in
// the order of Permissions.
func (c *Caller) Permissions() []string {
	var out []string
	for _, p := range Permissions {
		if c.perms[p] {
			out = append(out, p)
		}
	}
	return out
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

// Require answers nil when c holds perm: otherwise the 403 naming it and
// the kind of credential c used (Missing), or the 401 of a missing key
// when there is no caller (services handed a nil caller by a face). Every
// check of a permission goes through it.
func (c *Caller) Require(perm string) error {
	if c == nil {
		return MissingKey()
	}
	if !c.Can(perm) {
		return c.Missing(perm)
	}
	return nil
}

// MissingKey is the 401 of a request that sent no credential: the one
// sentence every face answers it with, whichever check finds it missing
// (the lookup of an empty bearer token, a face asking for its caller, a
// service handed none).
func MissingKey() *apierr.Error {
	return apierr.Unauthorized("missing API key: send Authorization: Bearer <API key>")
}

// Missing is the 403 of c lacking perm, naming the credential c used:
// "this access token lacks the compute.read permission".
func (c *Caller) Missing(perm string) *apierr.Error {
	return apierr.MissingPermission(string(c.CredentialKind()), perm)
}

// CredentialKind answers the kind of credential c was admitted with; a
// caller made without one (a test's) says "credential", which is true of
// every kind.
func (c *Caller) CredentialKind() Credential {
	if c == nil || c.Credential == "" {
		return "credential"
	}
	return c.Credential
}

// Authenticator resolves API keys and access tokens against the store. No
// cache: every request reads its credential's row, so an expiry or a
// revocation holds at once on every replica.
type Authenticator struct {
	Store *store.Store
	// Tokens verifies access tokens (POST /api/v1/token); nil refuses them.
	Tokens *Tokens
	usage  usage
}

// Lookup finds the caller owning token, or a 401 saying why not.
func (a *Authenticator) Lookup(ctx context.Context, token string) (*Caller, error) {
	start := time.Now()
	c, err := a.lookup(ctx, token)
	if err != nil {
		return nil, err
	}
	c.LookedUpAt, c.bearer, c.authn = start, token, a
	return c, nil
}

// Recheck answers the caller c's credential as it stands now, through the
// same checks as Lookup: a 401 when the key or application was revoked or
// expired (an access token too, when it expires), the 403 of
// OrganizationRefused when its organization was suspended or deleted since.
// Open streams call it when credentials change and on a timer.
// It asks the authenticator that admitted c.
func Recheck(ctx context.Context, c *Caller) (*Caller, error) {
	if c == nil || c.bearer == "" || c.authn == nil {
		return nil, apierr.Unauthorized("unknown API key")
	}
	return c.authn.Lookup(ctx, c.bearer)
}

// CredentialKey names the credential c was admitted with (a hash of it):
// streams of one credential are rechecked once for all.
func (c *Caller) CredentialKey() string { return HashToken(c.bearer) }

func (a *Authenticator) lookup(ctx context.Context, token string) (*Caller, error) {
	if token == "" {
		return nil, MissingKey()
	}
	if IsAccessToken(token) && a.Tokens != nil {
		return a.lookupAccessToken(ctx, token)
	}
	// An agent's secrets are no API key: say what they are for, rather than
	// "unknown API key" (and read no key row for them).
	switch {
	case strings.HasPrefix(token, agentapi.CredentialPrefix):
		return nil, apierr.Unauthorized("a " + string(NodeCredential) + " reports to /v1/agent/inventory and /v1/agent/heartbeat only: send an API key or an access token here")
	case strings.HasPrefix(token, agentapi.BootstrapTokenPrefix):
		return nil, apierr.Unauthorized("a bootstrap token is exchanged for a node credential at POST " + agentapi.RegisterPath + " only: send an API key or an access token here")
	}
	row, ok, err := a.Store.APIKeyByHash(ctx, HashToken(token))
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apierr.Unauthorized("unknown API key")
	}
	now := store.Now()
	if err := Usable("API key", row.RevokedAt, row.ExpiresAt, now); err != nil {
		return nil, err
	}
	if err := OrganizationRefused(row.OrganizationID, row.OrgState); err != nil {
		return nil, err
	}
	c := newCaller(row.OrganizationID, row.TenantID, row.InfinibandEnabled, strings.Fields(row.Permissions))
	c.KeyID, c.Credential = row.KeyID, APIKey
	if c.KeyID == "" {
		c.KeyID = models.KeyIDOf(row.TokenHash)
	}
	c.OrganizationState = row.OrgState
	a.usage.touch(a.Store, store.KindAPIKey, c.KeyID, now)
	return c, nil
}

// lookupAccessToken checks the token, then its application's row: a
// revoked or expired application's tokens stop working at once.
func (a *Authenticator) lookupAccessToken(ctx context.Context, token string) (*Caller, error) {
	cl, err := a.Tokens.verify(ctx, token)
	if err != nil {
		return nil, err
	}
	app, ok, err := a.Store.ApplicationByClientID(ctx, cl.Subject)
	if err != nil {
		return nil, err
	}
	if !ok || app.OrganizationID != cl.Organization {
		return nil, apierr.Unauthorized("the access token's application no longer exists")
	}
	now := store.Now()
	if err := Usable("application "+app.ID, app.RevokedAt, app.ExpiresAt, now); err != nil {
		return nil, err
	}
	state := models.OrgState(app.OrgState)
	if err := OrganizationRefused(app.OrganizationID, state); err != nil {
		return nil, err
	}
	c := newCaller(app.OrganizationID, app.TenantID, app.InfinibandEnabled, held(cl.Permissions, strings.Fields(app.Permissions)))
	c.KeyID, c.Credential = "app:"+app.ID, AccessToken
	c.OrganizationState = state
	a.usage.touch(a.Store, store.KindApplication, app.ID, now)
	return c, nil
}

// held answers the claimed permissions the application holds now (a
// permission it implies counts): a token never carries more than its
// application, even when its claims say so (a leaked signing key, or
// permissions narrowed since the token was issued).
func held(claimed, app []string) []string {
	holds := newCaller("", 0, false, app)
	var out []string
	for _, p := range claimed {
		if holds.Can(p) {
			out = append(out, p)
		}
	}
	return out
}

// Usable is the 401 of a revoked or expired credential, saying which (what
// names it: "API key", "application app-…"); nil for one that stands.
func Usable(what string, revokedAt, expiresAt *time.Time, now time.Time) error {
	if revokedAt != nil {
		return apierr.Unauthorized(what + " revoked at " + models.FormatTime(*revokedAt))
	}
	if expiresAt != nil && !now.Before(*expiresAt) {
		return apierr.Unauthorized(what + " expired at " + models.FormatTime(*expiresAt))
	}
	return nil
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
