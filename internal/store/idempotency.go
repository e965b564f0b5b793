package store

import (
	"context"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// The statements of idempotent requests (package idempotency): a key is
// reserved by inserting its row before the request acts, and the answer is
// written into that row once it is known. The table's primary key
// (organization_id, idem_key) is what lets only one of two racing requests
// reserve a key.

// IdempotencyRecord is one key's row. Status 0 means the first request
// with the key is still in flight (or died before answering).
type IdempotencyRecord struct {
	OrganizationID string `gorm:"column:organization_id"`
	IdemKey        string `gorm:"column:idem_key"`
	RequestHash    string
	Status         int
	// Headers are the answer's headers as JSON (migration 0021); Body its
	// body.
	Headers   string
	Body      string
	CreatedAt time.Time
}

// TableName is the idempotency keys' table (migration 0006).
func (IdempotencyRecord) TableName() string { return "idempotency_keys" }

// ReserveIdempotencyKey reserves key for orgID's request hash at now, in
// one transaction: it first deletes the organization's keys created before
// expired and its in-flight reservations made before abandoned (their
// request died), then inserts the reservation unless the key is taken.
// reserved says whether it inserted; otherwise rec is the key's row.
func (s *Store) ReserveIdempotencyKey(ctx context.Context, orgID, key, hash string, now, expired, abandoned time.Time) (rec *IdempotencyRecord, reserved bool, err error) {
	err = s.tx(ctx, func(db *gorm.DB) error {
		if err := db.Where("organization_id = ? AND (created_at < ? OR (status = 0 AND created_at < ?))", orgID, expired, abandoned).
			Delete(&IdempotencyRecord{}).Error; err != nil {
			return err
		}
		row := &IdempotencyRecord{OrganizationID: orgID, IdemKey: key, RequestHash: hash, CreatedAt: now}
		res := db.Clauses(clause.OnConflict{DoNothing: true}).Create(row)
		if res.Error != nil {
			return res.Error
		}
		if reserved = res.RowsAffected == 1; reserved {
			rec = row
			return nil
		}
		rec = &IdempotencyRecord{}
		return db.Where("organization_id = ? AND idem_key = ?", orgID, key).Take(rec).Error
	})
	return rec, reserved, err
}

// FinishIdempotencyKey writes the answer (status, headers, body) into the
// reservation rec, unless it is no longer rec's (it was abandoned and taken
// over meanwhile).
func (s *Store) FinishIdempotencyKey(ctx context.Context, rec *IdempotencyRecord, status int, headers, body string) error {
	return s.WithContext(ctx).Model(&IdempotencyRecord{}).
		Where("organization_id = ? AND idem_key = ? AND status = 0 AND created_at = ?", rec.OrganizationID, rec.IdemKey, rec.CreatedAt).
		Updates(map[string]any{"status": status, "headers": headers, "body": body}).Error
}

// ReleaseIdempotencyKey deletes the reservation rec, so the key may be sent
// again (the request failed in a way that is worth retrying).
func (s *Store) ReleaseIdempotencyKey(ctx context.Context, rec *IdempotencyRecord) error {
	return s.WithContext(ctx).
		Where("organization_id = ? AND idem_key = ? AND status = 0 AND created_at = ?", rec.OrganizationID, rec.IdemKey, rec.CreatedAt).
		Delete(&IdempotencyRecord{}).Error
}
