package credentials

import (
	"context"
	"crypto/subtle"
	"net/http"
	"strings"
	"time"

	"gpugraph/internal/auth"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/store"
	"gpugraph/models"
)

// The grant types of Run:ai's token request that an application's
// credentials answer: client_credentials (Run:ai's documentation) and
// app_token (what runapy's ApiClient sends).
const (
	GrantClientCredentials = "client_credentials"
	GrantAppToken          = "app_token"
)

// TokenRequest is Run:ai's token request: clientId/clientSecret as Run:ai
// documents it, or AppId/AppSecret as older clients (runapy) send it.
type TokenRequest struct {
	GrantType    string
	ClientID     string
	ClientSecret string
}

// AccessToken is the answer to a token request.
type AccessToken struct {
	Token     string
	ExpiresIn int // seconds
}

// Token exchanges an application's credentials for a signed access token
// valid for auth.AccessTokenTTL (never past the application's own expiry).
// Unknown client ids and wrong secrets answer the same 401; only a caller
// who knows the secret learns that the application is revoked or expired.
func (s *Service) Token(ctx context.Context, req TokenRequest) (*AccessToken, error) {
	switch req.GrantType {
	case GrantClientCredentials, GrantAppToken:
	case "":
		return nil, apierr.BadRequest("grantType is required: client_credentials (with clientId and clientSecret) or app_token")
	default:
		return nil, apierr.BadRequest("grantType %q is not supported: use client_credentials (with clientId and clientSecret) or app_token", clip(req.GrantType))
	}
	if req.ClientID == "" || req.ClientSecret == "" {
		return nil, apierr.BadRequest("clientId and clientSecret are required (AppId and AppSecret are read too)")
	}
	if s.tokens == nil {
		return nil, apierr.New(http.StatusServiceUnavailable, apierr.Unavailable, "access tokens are not configured")
	}
	app, ok, err := s.store.ApplicationByClientID(ctx, req.ClientID)
	if err != nil {
		return nil, err
	}
	if !ok || subtle.ConstantTimeCompare([]byte(app.SecretHash), []byte(auth.HashToken(req.ClientSecret))) != 1 {
		return nil, InvalidClient()
	}
	now := store.Now()
	if err := auth.Usable("application "+app.ID, app.RevokedAt, app.ExpiresAt, now); err != nil {
		return nil, err
	}
	if err := auth.OrganizationRefused(app.OrganizationID, models.OrgState(app.OrgState)); err != nil {
		return nil, err
	}
	now = now.Truncate(time.Second)
	exp := now.Add(auth.AccessTokenTTL)
	if app.ExpiresAt != nil && app.ExpiresAt.Before(exp) {
		exp = app.ExpiresAt.Truncate(time.Second)
	}
	tok, err := s.tokens.Issue(ctx, app.ID, app.OrganizationID, strings.Fields(app.Permissions), now, exp)
	if err != nil {
		return nil, err
	}
	return &AccessToken{Token: tok, ExpiresIn: int(exp.Sub(now) / time.Second)}, nil
}

// InvalidClient is the 401 of an unknown client id or a wrong secret,
// the same for both. A client id or secret that is no text (a NUL,
// invalid UTF-8) names no client either: the token request answers it
// this 401 too, not the 400 another body's text gets.
func InvalidClient() *apierr.Error { return apierr.Unauthorized("invalid client credentials") }

func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// RotateSigningKey replaces the access-token signing key every replica
// shares with a fresh one (gpugraph signing-key rotate): the replaced key
// keeps verifying the tokens it signed until they expire, or, with
// keepPrevious false, is forgotten at once (a leaked key). The key is the
// whole deployment's, so only a caller administering every organization
// may.
func (s *Service) RotateSigningKey(ctx context.Context, caller *auth.Caller, keepPrevious bool) error {
	if err := s.MayAdminister(caller); err != nil {
		return err
	}
	if !everyOrganization(caller) {
		return caller.Missing(auth.NodesAdmin)
	}
	return s.store.RotateSigningKey(ctx, auth.NewSigningKey(), keepPrevious, store.Now())
}
