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

	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/store"
	"gpugraph/models"
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
// refresh logic. The keys are the configured ones, or the ones stored in
// the database (the first made by the first replica that needed one,
// later ones by gpugraph signing-key rotate).
type Tokens struct {
	store *store.Store
	// fixed are --token-signing-key and --token-signing-key-previous:
	// never read from the database.
	fixed *keyring
	mu    sync.Mutex
	// stored is the database's keyring as last read, at readAt: read
	// again after KeyRefresh (a rotation reaches every replica within it)
	// and when a token fails to verify (one signed since by a replica that
	// read a newer key), at most once per keyRetry.
	stored          *keyring
	readAt, retryAt time.Time
	// refresh and retry are KeyRefresh and keyRetry (shorter in tests).
	refresh, retry time.Duration
}

// keyring is the key tokens are signed with and the keys they verify with:
// the current one, then the one it replaced.
type keyring struct {
	current  []byte
	previous []byte
}

func (k *keyring) verification() jwt.VerificationKeySet {
	set := jwt.VerificationKeySet{Keys: []jwt.VerificationKey{k.current}}
	if len(k.previous) > 0 {
		set.Keys = append(set.Keys, k.previous)
	}
	return set
}

// KeyRefresh is how long a replica signs with the stored key it read
// before reading it again; keyRetry bounds the reads a stream of
// unverifiable tokens can cause.
const (
	KeyRefresh = 30 * time.Second
	keyRetry   = time.Second
)

// NewTokens signs with key, or with the database's shared key when key is
// empty (nil or not: an unset flag is an empty string, never a key).
// previous, when given with key, verifies tokens signed before key
// replaced it.
func NewTokens(st *store.Store, key, previous []byte) (*Tokens, error) {
	if len(key) == 0 {
		if len(previous) > 0 {
			return nil, errors.New("a previous token signing key needs the current one too")
		}
		return &Tokens{store: st, refresh: KeyRefresh, retry: keyRetry}, nil
	}
	for _, k := range [][]byte{key, previous} {
		if len(k) > 0 && len(k) < MinSigningKeyLen {
			return nil, fmt.Errorf("the token signing key has %d bytes; it needs at least %d", len(k), MinSigningKeyLen)
		}
	}
	return &Tokens{store: st, fixed: &keyring{current: key, previous: previous}}, nil
}

// keys answers the keyring: the configured one, or the stored one (made
// when none is stored yet), read again once it is older than KeyRefresh,
// or older than keyRetry when stale says the one in hand failed.
func (t *Tokens) keys(ctx context.Context, stale bool) (*keyring, error) {
	if t.fixed != nil {
		return t.fixed, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	if t.stored != nil && now.Sub(t.readAt) < t.refresh && (!stale || now.Before(t.retryAt)) {
		return t.stored, nil
	}
	current, previous, err := t.store.SigningKeys(ctx, NewSigningKey())
	if err != nil {
		return nil, err
	}
	k := &keyring{}
	if k.current, err = decodeKey(current); err != nil {
		return nil, err
	}
	if previous != "" {
		if k.previous, err = decodeKey(previous); err != nil {
			return nil, err
		}
	}
	t.stored, t.readAt, t.retryAt = k, now, now.Add(t.retry)
	return k, nil
}

// NewSecret is 32 random bytes, URL-safe: the secret part of a node's or
// a cluster's credential.
func NewSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

// NewSigningKey is a fresh random key as the database stores it.
func NewSigningKey() string {
	b := make([]byte, MinSigningKeyLen)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeKey(secret string) ([]byte, error) {
	key, err := base64.RawURLEncoding.DecodeString(secret)
	if err != nil || len(key) < MinSigningKeyLen {
		return nil, errors.New("the stored token signing key is unreadable")
	}
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
	k, err := t.keys(ctx, false)
	if err != nil {
		return "", err
	}
	c := claims{Organization: orgID, Permissions: perms, RegisteredClaims: jwt.RegisteredClaims{
		Issuer: issuer, Subject: clientID, IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(exp),
	}}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(k.current)
}

// IsAccessToken tells an access token (a JWT: three base64url parts, the
// first a JSON header) from an API key without a lookup.
func IsAccessToken(token string) bool {
	return strings.HasPrefix(token, "eyJ") && strings.Count(token, ".") == 2
}

// verify checks an access token's signature, issuer and expiry. A
// signature no key in hand verifies is tried once more with the stored
// keys read again: another replica may have read a rotated key first.
func (t *Tokens) verify(ctx context.Context, token string) (*claims, error) {
	k, err := t.keys(ctx, false)
	if err != nil {
		return nil, err
	}
	c, err := parse(k, token)
	if errors.Is(err, jwt.ErrTokenSignatureInvalid) && t.fixed == nil {
		if k, err = t.keys(ctx, true); err != nil {
			return nil, err
		}
		c, err = parse(k, token)
	}
	switch {
	case errors.Is(err, jwt.ErrTokenExpired) && c.ExpiresAt != nil:
		return nil, apierr.Unauthorized(fmt.Sprintf("access token expired at %s; request a new one at POST /api/v1/token",
			models.FormatTime(c.ExpiresAt.UTC())))
	case err != nil:
		return nil, apierr.Unauthorized("invalid access token")
	}
	return c, nil
}

func parse(k *keyring, token string) (*claims, error) {
	var c claims
	_, err := jwt.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return k.verification(), nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}), jwt.WithIssuer(issuer),
		jwt.WithExpirationRequired(), jwt.WithTimeFunc(store.Now))
	return &c, err
}
