package auth

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"gpugraph/apierr"
	"gpugraph/models"
	"gpugraph/store"
)

// AccessTokenTTL is how long an access token from POST /api/v1/token
// works; clients ask for a new one with their application's credentials.
const AccessTokenTTL = time.Hour

// MinSigningKeyLen is the shortest --token-signing-key accepted: HS256
// wants a key at least as long as its hash.
const MinSigningKeyLen = 32

const issuer = "gpugraph"

// Tokens signs and verifies access tokens: HS256 JWTs carrying the
// application's organization and permissions, with exp for clients'
// refresh logic. The key is the configured one, or the one stored in the
// database (made by the first replica that needed it).
type Tokens struct {
	store *store.Store
	mu    sync.Mutex
	key   []byte
}

// NewTokens signs with key, or with the database's shared key when key is
// empty (nil or not: an unset flag is an empty string, never a key).
func NewTokens(st *store.Store, key []byte) (*Tokens, error) {
	if len(key) == 0 {
		return &Tokens{store: st}, nil
	}
	if len(key) < MinSigningKeyLen {
		return nil, fmt.Errorf("the token signing key has %d bytes; it needs at least %d", len(key), MinSigningKeyLen)
	}
	return &Tokens{store: st, key: key}, nil
}

// signingKey answers the key, reading (or making) the stored one once.
func (t *Tokens) signingKey(ctx context.Context) ([]byte, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.key) > 0 {
		return t.key, nil
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	secret, err := t.store.SigningKey(ctx, base64.RawURLEncoding.EncodeToString(b))
	if err != nil {
		return nil, err
	}
	key, err := base64.RawURLEncoding.DecodeString(secret)
	if err != nil || len(key) < MinSigningKeyLen {
		return nil, errors.New("the stored token signing key is unreadable")
	}
	t.key = key
	return key, nil
}

// claims are an access token's: sub is the application's client id.
type claims struct {
	Organization string   `json:"org"`
	Permissions  []string `json:"permissions"`
	jwt.RegisteredClaims
}

// Issue signs an access token for application clientID of organization
// orgID holding perms, valid until exp.
func (t *Tokens) Issue(ctx context.Context, clientID, orgID string, perms []string, now, exp time.Time) (string, error) {
	key, err := t.signingKey(ctx)
	if err != nil {
		return "", err
	}
	c := claims{Organization: orgID, Permissions: perms, RegisteredClaims: jwt.RegisteredClaims{
		Issuer: issuer, Subject: clientID, IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(exp),
	}}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(key)
}

// IsAccessToken tells an access token (a JWT: three base64url parts, the
// first a JSON header) from an API key without a lookup.
func IsAccessToken(token string) bool {
	return strings.HasPrefix(token, "eyJ") && strings.Count(token, ".") == 2
}

// verify checks an access token's signature, issuer and expiry.
func (t *Tokens) verify(ctx context.Context, token string) (*claims, error) {
	key, err := t.signingKey(ctx)
	if err != nil {
		return nil, err
	}
	var c claims
	_, err = jwt.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return key, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}), jwt.WithIssuer(issuer),
		jwt.WithExpirationRequired(), jwt.WithTimeFunc(store.Now))
	switch {
	case errors.Is(err, jwt.ErrTokenExpired) && c.ExpiresAt != nil:
		return nil, apierr.Unauthorized(fmt.Sprintf("access token expired at %s; request a new one at POST /api/v1/token",
			models.FormatTime(c.ExpiresAt.UTC())))
	case err != nil:
		return nil, apierr.Unauthorized("invalid access token")
	}
	return &c, nil
}
