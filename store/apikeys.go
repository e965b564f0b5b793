package store

import (
	"context"
	"errors"
	"time"

	"gpugraph/models"

	"gorm.io/gorm"
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
	err = s.DB.WithContext(ctx).Raw(`SELECT k.token_hash, k.key_id, k.organization_id, o.state AS org_state, k.permissions,
		o.tenant_id, o.infiniband_enabled, k.expires_at, k.revoked_at
		FROM api_keys k JOIN organizations o ON o.id = k.organization_id
		WHERE k.token_hash = ?`, hash).Take(&k).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return KeyHolder{}, false, nil
	}
	if err != nil {
		return KeyHolder{}, false, err
	}
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
