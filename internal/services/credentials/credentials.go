package credentials

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"gpugraph/internal/auth"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/store"
	"gpugraph/models"
)

// The prefixes of the secrets made here: secret scanners find them, and
// they say what a leaked string is.
const (
	KeyPrefix    = "gpgkey_"
	SecretPrefix = "gpgapp_"
)

// Codes of the refusals of credential administration.
const (
	CodeKeyNotFound          = "API_KEY_NOT_FOUND"
	CodeApplicationNotFound  = "APPLICATION_NOT_FOUND"
	CodeOrganizationNotFound = "ORGANIZATION_NOT_FOUND"
	CodeOrganizationExists   = "ORGANIZATION_EXISTS"
	CodeTenantTaken          = "TENANT_ID_TAKEN"
	CodePermissionNotHeld    = "PERMISSION_NOT_HELD"
)

// maxName bounds a credential's or an organization's name.
const maxName = 128

// Service is credential administration for both faces and the command line.
type Service struct {
	store  *store.Store
	tokens *auth.Tokens
}

// New is the service over st; tokens signs access tokens (nil: none are issued).
func New(st *store.Store, tokens *auth.Tokens) *Service { return &Service{store: st, tokens: tokens} }

// Credential is a key or an application as listed: never its secret.
type Credential = store.Credential

// Created is a new credential with its secret, shown only once.
type Created struct {
	Credential
	Secret string
}

// Spec is what a new key or application is made with.
type Spec struct {
	OrganizationID string // "" for the caller's own
	Name           string
	Permissions    []string
	Expires        string // "" never; a duration such as 90d or 36h, or an RFC 3339 instant
}

// CreateKey makes an API key.
func (s *Service) CreateKey(ctx context.Context, caller *auth.Caller, spec Spec) (*Created, error) {
	c, err := s.newCredential(ctx, caller, spec)
	if err != nil {
		return nil, err
	}
	secret := KeyPrefix + auth.NewSecret()
	hash := auth.HashToken(secret)
	c.ID = models.KeyIDOf(hash)
	if err := s.store.CreateAPIKey(ctx, hash, c); err != nil {
		return nil, err
	}
	return &Created{Credential: c, Secret: secret}, nil
}

// CreateApplication makes an application: a client id and a secret.
func (s *Service) CreateApplication(ctx context.Context, caller *auth.Caller, spec Spec) (*Created, error) {
	c, err := s.newCredential(ctx, caller, spec)
	if err != nil {
		return nil, err
	}
	id := make([]byte, 8)
	_, _ = rand.Read(id)
	c.ID = "app-" + hex.EncodeToString(id)
	secret := SecretPrefix + auth.NewSecret()
	if err := s.store.CreateApplication(ctx, auth.HashToken(secret), c); err != nil {
		return nil, err
	}
	return &Created{Credential: c, Secret: secret}, nil
}

func (s *Service) newCredential(ctx context.Context, caller *auth.Caller, spec Spec) (store.Credential, error) {
	if err := s.MayAdminister(caller); err != nil {
		return store.Credential{}, err
	}
	org, err := s.organization(ctx, caller, spec.OrganizationID)
	if err != nil {
		return store.Credential{}, err
	}
	if err := checkName("name", spec.Name, true); err != nil {
		return store.Credential{}, err
	}
	perms, err := s.permissions(caller, spec.Permissions)
	if err != nil {
		return store.Credential{}, err
	}
	now := store.Now()
	exp, err := ParseExpires(spec.Expires, now)
	if err != nil {
		return store.Credential{}, err
	}
	return store.Credential{OrganizationID: org, Name: spec.Name, Permissions: strings.Join(perms, " "),
		CreatedAt: now, ExpiresAt: exp}, nil
}

// ListKeys lists the API keys of orgID ("" for every organization the
// caller administers).
func (s *Service) ListKeys(ctx context.Context, caller *auth.Caller, orgID string) ([]Credential, error) {
	return s.list(ctx, caller, store.KindAPIKey, orgID)
}

// ListApplications lists the applications of orgID ("" for every
// organization the caller administers).
func (s *Service) ListApplications(ctx context.Context, caller *auth.Caller, orgID string) ([]Credential, error) {
	return s.list(ctx, caller, store.KindApplication, orgID)
}

func (s *Service) list(ctx context.Context, caller *auth.Caller, kind store.CredentialKind, orgID string) ([]Credential, error) {
	if err := s.MayAdminister(caller); err != nil {
		return nil, err
	}
	if orgID == "" && !everyOrganization(caller) {
		orgID = caller.OrganizationID
	}
	if orgID != "" {
		if _, err := s.organization(ctx, caller, orgID); err != nil {
			return nil, err
		}
	}
	out, err := s.store.ListCredentials(ctx, kind, orgID)
	if out == nil {
		out = []Credential{}
	}
	return out, err
}

// RevokeKey revokes API key id: it answers 401 "API key revoked at …" from
// now on, on every replica. Revoking it again changes nothing.
func (s *Service) RevokeKey(ctx context.Context, caller *auth.Caller, id string) (*Credential, error) {
	return s.revoke(ctx, caller, store.KindAPIKey, id, CodeKeyNotFound, "API key")
}

// RevokeApplication revokes application id: its secret and every access
// token it was given stop working at once.
func (s *Service) RevokeApplication(ctx context.Context, caller *auth.Caller, id string) (*Credential, error) {
	return s.revoke(ctx, caller, store.KindApplication, id, CodeApplicationNotFound, "application")
}

func (s *Service) revoke(ctx context.Context, caller *auth.Caller, kind store.CredentialKind, id, code, what string) (*Credential, error) {
	if err := s.MayAdminister(caller); err != nil {
		return nil, err
	}
	if err := checkName("id", id, false); err != nil {
		return nil, err
	}
	c, ok, err := s.store.CredentialByID(ctx, kind, id)
	if err != nil {
		return nil, err
	}
	if !ok || !reaches(caller, c.OrganizationID) {
		return nil, apierr.NotFound(code, "%s %s not found", what, id)
	}
	now := store.Now()
	revoked, err := s.store.RevokeCredential(ctx, kind, id, now)
	switch {
	case err != nil:
		return nil, err
	case revoked:
		c.RevokedAt = &now
	case c.RevokedAt == nil: // revoked meanwhile by another request: its time
		c, _, err = s.store.CredentialByID(ctx, kind, id)
	}
	return &c, err
}

// Organization is a new organization.
type Organization struct {
	ID                string
	Name              string
	TenantID          int
	InfinibandEnabled bool
}

// CreateOrganization stores a new, active organization: the platform
// operator's (admin with nodes.admin) or the command line's.
func (s *Service) CreateOrganization(ctx context.Context, caller *auth.Caller, o Organization) (*Organization, error) {
	if err := s.MayAdminister(caller); err != nil {
		return nil, err
	}
	if !everyOrganization(caller) {
		return nil, caller.Missing(auth.NodesAdmin)
	}
	if err := checkName("id", o.ID, false); err != nil {
		return nil, err
	}
	if err := checkName("name", o.Name, false); err != nil {
		return nil, err
	}
	if o.TenantID <= 0 {
		return nil, apierr.BadRequest("tenantId %d: the organization's Run:ai tenant must be a positive integer", o.TenantID)
	}
	err := s.store.CreateOrganization(ctx, o.ID, o.Name, o.TenantID, o.InfinibandEnabled)
	if errors.Is(err, store.ErrDuplicate) {
		return nil, apierr.Conflict(CodeOrganizationExists, "organization %s exists already", o.ID)
	}
	// Only the platform operator creates organizations, so naming the
	// holder tells no tenant anything it may not know.
	var taken *store.TenantTakenError
	if errors.As(err, &taken) {
		return nil, apierr.Conflict(CodeTenantTaken,
			"Run:ai tenant %d is held by organization %s (%s): a tenant's pods are read by one organization's keys; give %s a tenant of its own",
			o.TenantID, taken.Holder.ID, taken.Holder.Name, o.ID)
	}
	if err != nil {
		return nil, err
	}
	return &o, nil
}

// ListOrganizations lists the organizations the caller administers, by
// id: every one for the platform operator (admin with nodes.admin) and the
// command line, its own for an organization's admin.
func (s *Service) ListOrganizations(ctx context.Context, caller *auth.Caller) ([]models.Organization, error) {
	if err := s.MayAdminister(caller); err != nil {
		return nil, err
	}
	all, err := s.store.ListOrganizations(ctx)
	if err != nil {
		return nil, err
	}
	out := []models.Organization{}
	for _, o := range all {
		if reaches(caller, o.ID) {
			out = append(out, o)
		}
	}
	return out, nil
}

// MayAdminister is the permission every administration of credentials
// needs: admin (the 401 or 403 of a caller that is not an administrator).
// Each method checks it first; a face that reads a body of its own before
// calling one asks it first, so that a refusal answers before a bad body
// does.
func (s *Service) MayAdminister(caller *auth.Caller) error { return caller.Require(auth.Admin) }

// everyOrganization reports whether the caller administers every organization.
func everyOrganization(c *auth.Caller) bool {
	return c.System || (c.Can(auth.Admin) && c.Can(auth.NodesAdmin))
}

// reaches reports whether the caller administers organization orgID.
func reaches(c *auth.Caller, orgID string) bool {
	return everyOrganization(c) || c.OrganizationID == orgID
}

// organization answers the organization a new credential belongs to:
// the caller's own unless named; one it does not reach does not exist.
func (s *Service) organization(ctx context.Context, caller *auth.Caller, orgID string) (string, error) {
	if orgID == "" {
		if caller.System {
			return "", apierr.BadRequest("organizationId is required")
		}
		return caller.OrganizationID, nil
	}
	if err := checkName("organizationId", orgID, false); err != nil {
		return "", err
	}
	if !caller.System && orgID == caller.OrganizationID {
		return orgID, nil // read with the caller's credential just now
	}
	if reaches(caller, orgID) {
		ok, err := s.store.OrganizationExists(ctx, orgID)
		if err != nil || ok {
			return orgID, err
		}
	}
	return "", apierr.NotFound(CodeOrganizationNotFound, "organization %s not found", orgID)
}

// permissions checks a new credential's permissions: known ones, at least
// one, each held by the caller (no one grants more than it has).
func (s *Service) permissions(caller *auth.Caller, perms []string) ([]string, error) {
	var out []string
	for _, p := range perms {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if !auth.ValidPermission(p) {
			return nil, apierr.BadRequest("permission %q is not one of %s", p, strings.Join(auth.Permissions, ", "))
		}
		if !caller.Can(p) {
			return nil, apierr.Refused(CodePermissionNotHeld, "you cannot grant %s: you do not hold it", p)
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, apierr.BadRequest("permissions are missing: name at least one of %s", strings.Join(auth.Permissions, ", "))
	}
	return out, nil
}

// ParseExpires reads when a new credential expires: "" never, a duration
// from now ("90d", "36h", "1h30m"; d is 24 hours), or an RFC 3339 instant.
// It must be in the future.
func ParseExpires(s string, now time.Time) (*time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var at time.Time
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n <= 0 || n > 36500 {
			return nil, apierr.BadRequest("expires %q: want a number of days from 1 to 36500 (90d), a duration (36h) or an RFC 3339 instant", s)
		}
		at = now.AddDate(0, 0, n)
	} else if d, err := time.ParseDuration(s); err == nil {
		if d <= 0 {
			return nil, apierr.BadRequest("expires %q: a duration must be positive", s)
		}
		at = now.Add(d)
	} else if t, err := models.ParseTime(s); err == nil {
		at = t
	} else {
		return nil, apierr.BadRequest("expires %q: want a number of days (90d), a duration (36h) or an RFC 3339 instant", s)
	}
	at = at.UTC().Truncate(time.Second)
	if !at.After(now) {
		return nil, apierr.BadRequest("expires %s is not in the future", models.FormatTime(at))
	}
	return &at, nil
}

// checkName holds an id or a name to printable UTF-8 of at most maxName
// bytes; empty only when allowed.
func checkName(field, s string, emptyOK bool) error {
	if s == "" {
		if emptyOK {
			return nil
		}
		return apierr.BadRequest("%s is required", field)
	}
	if len(s) > maxName || !utf8.ValidString(s) {
		return apierr.BadRequest("%s: at most %d bytes of UTF-8", field, maxName)
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return apierr.BadRequest("%s %q has a character that is not printable", field, s)
		}
	}
	return nil
}

// Viewer answers who the caller is: its credential, its organization and
// the permissions it holds. Any credential may ask, as it may know itself;
// it names only its own organization.
func (s *Service) Viewer(ctx context.Context, caller *auth.Caller) (*models.Viewer, error) {
	var org *models.Organization
	err := s.store.InTx(ctx, func(tx *store.Txn) error {
		var err error
		org, err = s.store.Organization(tx, caller.OrganizationID)
		return err
	})
	if err != nil {
		return nil, err
	}
	perms := caller.Permissions()
	if perms == nil {
		perms = []string{}
	}
	return &models.Viewer{
		// An access token's KeyID is "app:<clientId>"; the Credential
		// type names an application by its clientId alone.
		CredentialID:     strings.TrimPrefix(caller.KeyID, "app:"),
		OrganizationID:   org.ID,
		OrganizationName: org.Name,
		Permissions:      perms,
	}, nil
}
