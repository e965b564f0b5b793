package store

import (
	"context"
	"time"

	"gpugraph/models"
)

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
