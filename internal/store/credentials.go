package store

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"

	"gpugraph/models"
)

// Credential is an API key or an application as an administrator sees it:
// never its secret nor its hash.
type Credential struct {
	ID             string // a key's key_id, an application's client_id
	OrganizationID string
	Name           string
	Permissions    string // space-separated
	CreatedAt      time.Time
	LastUsedAt     *time.Time
	ExpiresAt      *time.Time
	RevokedAt      *time.Time
}

// ErrDuplicate is a row whose key is taken already.
var ErrDuplicate = errors.New("store: the row exists already")

// CredentialKind names the table of a credential.
type CredentialKind string

// The credentials an administrator manages.
const (
	KindAPIKey      CredentialKind = "api_keys"
	KindApplication CredentialKind = "applications"
)

// idColumn is the column a kind's rows are named by.
func (k CredentialKind) idColumn() string {
	if k == KindApplication {
		return "client_id"
	}
	return "key_id"
}

// CreateAPIKey stores a new key under its hash.
func (s *Store) CreateAPIKey(ctx context.Context, tokenHash string, c Credential) error {
	return s.DB.WithContext(ctx).Exec(`INSERT INTO api_keys
		(token_hash, key_id, organization_id, name, permissions, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`,
		tokenHash, c.ID, c.OrganizationID, c.Name, c.Permissions, c.CreatedAt, c.ExpiresAt).Error
}

// CreateApplication stores a new application under its secret's hash.
func (s *Store) CreateApplication(ctx context.Context, secretHash string, c Credential) error {
	return s.DB.WithContext(ctx).Exec(`INSERT INTO applications
		(client_id, secret_hash, organization_id, name, permissions, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`,
		c.ID, secretHash, c.OrganizationID, c.Name, c.Permissions, c.CreatedAt, c.ExpiresAt).Error
}

// ListCredentials reads kind's rows of organization orgID ("" for every
// organization), oldest first.
func (s *Store) ListCredentials(ctx context.Context, kind CredentialKind, orgID string) ([]Credential, error) {
	q := s.DB.WithContext(ctx).Table(string(kind)).
		Select(kind.idColumn() + " AS id, organization_id, name, permissions, created_at, last_used_at, expires_at, revoked_at")
	if orgID != "" {
		q = q.Where("organization_id = ?", orgID)
	}
	var out []Credential
	if err := q.Order("created_at, " + kind.idColumn()).Find(&out).Error; err != nil {
		return nil, err
	}
	for i := range out {
		utcCredential(&out[i])
	}
	return out, nil
}

// CredentialByID reads one row of kind, ok=false when there is none.
func (s *Store) CredentialByID(ctx context.Context, kind CredentialKind, id string) (c Credential, ok bool, err error) {
	err = s.DB.WithContext(ctx).Table(string(kind)).
		Select(kind.idColumn()+" AS id, organization_id, name, permissions, created_at, last_used_at, expires_at, revoked_at").
		Where(kind.idColumn()+" = ?", id).Take(&c).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return Credential{}, false, nil
	}
	if err != nil {
		return Credential{}, false, err
	}
	utcCredential(&c)
	return c, true, nil
}

// RevokeCredential marks id of kind revoked at now unless it is already (a
// revocation is never moved), and answers whether it did. A revocation
// notifies every process's open streams in its transaction, so they check
// their credentials again at once (they also re-check on a timer).
func (s *Store) RevokeCredential(ctx context.Context, kind CredentialKind, id string, now time.Time) (revoked bool, err error) {
	err = s.tx(ctx, func(tx *gorm.DB) error {
		res := tx.Table(string(kind)).Where(kind.idColumn()+" = ? AND revoked_at IS NULL", id).Update("revoked_at", now)
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error
		}
		revoked = true
		return s.note(tx, TopicCredentials, 0)
	})
	return revoked, err
}

// TouchCredential records that id of kind was used at now, unless a use
// after notBefore is recorded already: replicas sharing a database write
// it at most about once per throttle window between them. It runs beside
// the requests, not in one, so it goes through database/sql and not gorm:
// no request's statement count (sqlcount's gorm callbacks) includes it.
func (s *Store) TouchCredential(ctx context.Context, kind CredentialKind, id string, now, notBefore time.Time) error {
	db, err := s.DB.DB()
	if err != nil {
		return err
	}
	q := `UPDATE ` + string(kind) + ` SET last_used_at = ? WHERE ` + kind.idColumn() + ` = ? AND (last_used_at IS NULL OR last_used_at < ?)`
	if s.Dialect == Postgres {
		q = `UPDATE ` + string(kind) + ` SET last_used_at = $1 WHERE ` + kind.idColumn() + ` = $2 AND (last_used_at IS NULL OR last_used_at < $3)`
	}
	_, err = db.ExecContext(ctx, q, now, id, notBefore)
	return err
}

// Application is what an application's credentials grant.
type Application struct {
	Credential
	SecretHash        string
	OrgState          string
	TenantID          int
	InfinibandEnabled bool
}

// ApplicationByClientID reads an application with its organization's
// facts, ok=false when there is none.
func (s *Store) ApplicationByClientID(ctx context.Context, clientID string) (a Application, ok bool, err error) {
	var row struct {
		ID, OrganizationID, Name, Permissions, SecretHash, OrgState string
		TenantID                                                    int
		InfinibandEnabled                                           bool
		CreatedAt                                                   time.Time
		LastUsedAt, ExpiresAt, RevokedAt                            *time.Time
	}
	err = s.DB.WithContext(ctx).Raw(`SELECT a.client_id AS id, a.organization_id, a.name, a.permissions, a.secret_hash,
		o.state AS org_state, o.tenant_id, o.infiniband_enabled, a.created_at, a.last_used_at, a.expires_at, a.revoked_at
		FROM applications a JOIN organizations o ON o.id = a.organization_id
		WHERE a.client_id = ?`, clientID).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return Application{}, false, nil
	}
	if err != nil {
		return Application{}, false, err
	}
	a = Application{
		Credential: Credential{ID: row.ID, OrganizationID: row.OrganizationID, Name: row.Name, Permissions: row.Permissions,
			CreatedAt: row.CreatedAt, LastUsedAt: row.LastUsedAt, ExpiresAt: row.ExpiresAt, RevokedAt: row.RevokedAt},
		SecretHash: row.SecretHash, OrgState: row.OrgState, TenantID: row.TenantID, InfinibandEnabled: row.InfinibandEnabled,
	}
	utcCredential(&a.Credential)
	return a, true, nil
}

func utcCredential(c *Credential) {
	c.CreatedAt = c.CreatedAt.UTC()
	c.LastUsedAt, c.ExpiresAt, c.RevokedAt = utcPtr(c.LastUsedAt), utcPtr(c.ExpiresAt), utcPtr(c.RevokedAt)
}

// The rows of signing_keys: the key access tokens are signed with, and the
// one it replaced, which still verifies tokens signed before a rotation.
const (
	signingKeyCurrent  = "access-token"
	signingKeyPrevious = "access-token-previous"
)

// SigningKeys answers the access-token signing keys all replicas share:
// the current one, and the one a rotation replaced ("" when none).
// proposed is inserted as the current key when none is stored yet, and
// whichever insert won is read back, so replicas starting at once agree.
func (s *Store) SigningKeys(ctx context.Context, proposed string) (current, previous string, err error) {
	db := s.DB.WithContext(ctx)
	err = db.Exec(`INSERT INTO signing_keys (id, secret, created_at) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING`,
		signingKeyCurrent, proposed, Now()).Error
	if err != nil {
		return "", "", err
	}
	var rows []struct{ ID, Secret string }
	if err := db.Raw(`SELECT id, secret FROM signing_keys WHERE id IN (?, ?)`, signingKeyCurrent, signingKeyPrevious).
		Find(&rows).Error; err != nil {
		return "", "", err
	}
	for _, r := range rows {
		if r.ID == signingKeyCurrent {
			current = r.Secret
		} else {
			previous = r.Secret
		}
	}
	return current, previous, nil
}

// RotateSigningKey makes secret the current signing key, in one
// transaction: the current key becomes the previous one (tokens it signed
// keep verifying until they expire), or, with keepPrevious false, is
// forgotten (tokens it signed stop working: a leaked key).
func (s *Store) RotateSigningKey(ctx context.Context, secret string, keepPrevious bool, now time.Time) error {
	return s.tx(ctx, func(tx *gorm.DB) error {
		if err := tx.Exec(`DELETE FROM signing_keys WHERE id = ?`, signingKeyPrevious).Error; err != nil {
			return err
		}
		if keepPrevious {
			if err := tx.Exec(`UPDATE signing_keys SET id = ? WHERE id = ?`, signingKeyPrevious, signingKeyCurrent).Error; err != nil {
				return err
			}
		} else if err := tx.Exec(`DELETE FROM signing_keys WHERE id = ?`, signingKeyCurrent).Error; err != nil {
			return err
		}
		return tx.Exec(`INSERT INTO signing_keys (id, secret, created_at) VALUES (?, ?, ?)`, signingKeyCurrent, secret, now).Error
	})
}

// KeyHolder is what a stored API key grants: its organization, that
// organization's Run:ai tenant and InfiniBand entitlement, and the key's
// permissions as stored (space-separated), with its expiry and revocation.
type KeyHolder struct {
	TokenHash         string
	KeyID             string
	OrganizationID    string
	OrgState          models.OrgState
	Permissions       string
	TenantID          int
	InfinibandEnabled bool
	ExpiresAt         *time.Time
	RevokedAt         *time.Time
}

// APIKeyByHash reads the key stored under hash with its organization's
// facts, or ok=false when no key has that hash.
func (s *Store) APIKeyByHash(ctx context.Context, hash string) (k KeyHolder, ok bool, err error) {
	// Every request reads it: scanned directly, not through gorm's reflection.
	rows, err := rowsOf(ctx, s, func(r rowScanner, k *KeyHolder) error {
		return r.Scan(&k.TokenHash, &k.KeyID, &k.OrganizationID, &k.OrgState, &k.Permissions,
			&k.TenantID, &k.InfinibandEnabled, &k.ExpiresAt, &k.RevokedAt)
	}, `SELECT k.token_hash, COALESCE(k.key_id, ''), k.organization_id, COALESCE(o.state, ''), k.permissions,
		o.tenant_id, o.infiniband_enabled, k.expires_at, k.revoked_at
		FROM api_keys k JOIN organizations o ON o.id = k.organization_id
		WHERE k.token_hash = ?`, hash)
	if err != nil || len(rows) == 0 {
		return KeyHolder{}, false, err
	}
	k = *rows[0]
	k.ExpiresAt, k.RevokedAt = utcPtr(k.ExpiresAt), utcPtr(k.RevokedAt)
	return k, true, nil
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
