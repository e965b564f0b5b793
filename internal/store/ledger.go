package store

import (
	"context"
	"slices"
	"strings"

	"gpugraph/models"
)

// The organizations' ledgers (docs/decisions/0042-metering.md): entries
// are appended, never changed; a balance is their sum.

// AppendLedger appends the entries es, each unless its organization has an
// entry of its idempotency key already, and answers those it wrote (with
// their ids): one statement for up to 200.
func (s *Store) AppendLedger(tx *Txn, es []*models.LedgerEntry) ([]*models.LedgerEntry, error) {
	var written []*models.LedgerEntry
	for part := range slices.Chunk(es, 200) {
		var sb strings.Builder
		sb.WriteString("INSERT INTO ledger_entries (organization_id, kind, amount_micro_cents, reason, idempotency_key, created_at) VALUES ")
		args := make([]any, 0, 6*len(part))
		for i, e := range part {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString("(?, ?, ?, ?, ?, ?)")
			args = append(args, e.OrganizationID, e.Kind, e.AmountMicroCents, e.Reason, e.IdempotencyKey, e.CreatedAt)
		}
		sb.WriteString(" ON CONFLICT (organization_id, idempotency_key) DO NOTHING RETURNING id, organization_id, idempotency_key")
		var got []struct {
			ID             int64
			OrganizationID string
			IdempotencyKey string
		}
		if err := tx.db.Raw(sb.String(), args...).Find(&got).Error; err != nil {
			return nil, err
		}
		ids := make(map[[2]string]int64, len(got))
		for _, g := range got {
			ids[[2]string{g.OrganizationID, g.IdempotencyKey}] = g.ID
		}
		for _, e := range part {
			if id, ok := ids[[2]string{e.OrganizationID, e.IdempotencyKey}]; ok {
				e.ID = id
				written = append(written, e)
			}
		}
	}
	return written, nil
}

// LedgerEntryByKey reads the organization's entry of idempotency key key;
// nil when it has none.
func (s *Store) LedgerEntryByKey(tx *Txn, orgID, key string) (*models.LedgerEntry, error) {
	var es []models.LedgerEntry
	if err := tx.db.Where("organization_id = ? AND idempotency_key = ?", orgID, key).Limit(1).Find(&es).Error; err != nil {
		return nil, err
	}
	if len(es) == 0 {
		return nil, nil
	}
	return &es[0], nil
}

// PrepaidOrganizations answers which of orgIDs are prepaid: those that
// have ever been granted a credit.
func (s *Store) PrepaidOrganizations(tx *Txn, orgIDs []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(orgIDs) == 0 {
		return out, nil
	}
	var ids []string
	err := tx.db.Raw(`SELECT DISTINCT organization_id FROM ledger_entries WHERE kind = ? AND organization_id IN ?`,
		models.LedgerCredit, orgIDs).Find(&ids).Error
	for _, id := range ids {
		out[id] = true
	}
	return out, err
}

// LedgerBalance answers the sum of the organization's ledger, in
// micro-cents, and whether it is prepaid (has been granted a credit).
func (s *Store) LedgerBalance(ctx context.Context, orgID string) (balance int64, prepaid bool, err error) {
	var b struct {
		Balance int64
		Credits int64
	}
	err = s.WithContext(ctx).Raw(`SELECT COALESCE(SUM(amount_micro_cents), 0) AS balance,
		COALESCE(SUM(CASE WHEN kind = ? THEN 1 ELSE 0 END), 0) AS credits
		FROM ledger_entries WHERE organization_id = ?`, models.LedgerCredit, orgID).Find(&b).Error
	return b.Balance, b.Credits > 0, err
}

// LedgerEntries reads the organization's entries after the id after,
// oldest first, at most limit.
func (s *Store) LedgerEntries(ctx context.Context, orgID string, after int64, limit int) ([]models.LedgerEntry, error) {
	var out []models.LedgerEntry
	err := s.WithContext(ctx).Where("organization_id = ? AND id > ?", orgID, after).Order("id").Limit(limit).Find(&out).Error
	for i := range out {
		out[i].CreatedAt = out[i].CreatedAt.UTC()
	}
	return out, err
}
