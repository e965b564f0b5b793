package store

import (
	"context"
	"slices"
	"time"

	"gpugraph/models"
)

// The reads of the reconciliation (gpugraph billing reconcile): every
// cursor, each workload's whole event log, its records in a window, and
// the ledgers' usage debits beside the records they debit.

// CursorThrough is how far one workload's usage is closed.
type CursorThrough struct {
	VMID           string `gorm:"column:vm_id"`
	OrganizationID string
	Through        time.Time
}

// CursorsThrough reads every workload's cursor (of organization orgID
// only, unless ""), by id.
func (s *Store) CursorsThrough(ctx context.Context, orgID string) ([]CursorThrough, error) {
	q := s.WithContext(ctx).Table("usage_cursors").Select("vm_id, organization_id, through")
	if orgID != "" {
		q = q.Where("organization_id = ?", orgID)
	}
	var out []CursorThrough
	err := q.Order("vm_id").Find(&out).Error
	for i := range out {
		out[i].Through = out[i].Through.UTC()
	}
	return out, err
}

// ReconcileReads are one group of workloads' events (all of them, by id),
// records whose period starts in the window, earliest record of all, and
// rows.
type ReconcileReads struct {
	Events      map[string][]*models.VMEvent
	Records     map[string][]models.UsageRecord
	FirstPeriod map[string]time.Time
	VMs         map[string]MeteredVM
}

// ReadForReconcile reads ids' events, their records whose period starts
// in [from, to), the start of each one's earliest record, and their rows.
func (s *Store) ReadForReconcile(ctx context.Context, ids []string, from, to time.Time) (*ReconcileReads, error) {
	out := &ReconcileReads{Events: map[string][]*models.VMEvent{}, Records: map[string][]models.UsageRecord{},
		FirstPeriod: map[string]time.Time{}}
	err := s.InTx(ctx, func(tx *Txn) error {
		for part := range slices.Chunk(ids, 500) {
			var evs []*models.VMEvent
			if err := tx.db.Where("vm_id IN ?", part).Order("vm_id, id").Find(&evs).Error; err != nil {
				return err
			}
			for _, e := range evs {
				e.At = e.At.UTC()
				out.Events[e.VMID] = append(out.Events[e.VMID], e)
			}
			var recs []models.UsageRecord
			if err := tx.db.Where("vm_id IN ? AND period_start >= ? AND period_start < ?", part, from, to).
				Order("vm_id, kind, period_start").Find(&recs).Error; err != nil {
				return err
			}
			for _, r := range recs {
				r.PeriodStart = r.PeriodStart.UTC()
				out.Records[r.VMID] = append(out.Records[r.VMID], r)
			}
			// The row itself, not MIN's value: SQLite answers an aggregate
			// of a time column untyped.
			var firsts []struct {
				VMID        string `gorm:"column:vm_id"`
				PeriodStart time.Time
			}
			if err := tx.db.Raw(`SELECT r.vm_id, r.period_start FROM usage_records r WHERE r.vm_id IN ?
				AND r.period_start = (SELECT MIN(f.period_start) FROM usage_records f WHERE f.vm_id = r.vm_id)`, part).
				Find(&firsts).Error; err != nil {
				return err
			}
			for _, f := range firsts {
				out.FirstPeriod[f.VMID] = f.PeriodStart.UTC()
			}
		}
		var err error
		out.VMs, err = s.MeteredVMs(tx, ids)
		return err
	})
	return out, err
}

// LedgerUsage is one prepaid organization's usage in the ledger beside
// the records it debits: the usage debits written in a window, and the
// cost of the records closed in it once the organization was prepaid
// (at or after its first credit).
type LedgerUsage struct {
	OrganizationID   string
	DebitMicroCents  int64
	ClosedMicroCents int64
}

// LedgerUsageIn reads every prepaid organization's LedgerUsage over
// [from, to) (of orgID only, unless ""), by id.
func (s *Store) LedgerUsageIn(ctx context.Context, from, to time.Time, orgID string) ([]LedgerUsage, error) {
	var out []LedgerUsage
	err := s.WithContext(ctx).Raw(`SELECT c.organization_id,
		COALESCE((SELECT -SUM(l.amount_micro_cents) FROM ledger_entries l WHERE l.organization_id = c.organization_id
			AND l.kind = ? AND l.created_at >= ? AND l.created_at < ?), 0) AS debit_micro_cents,
		COALESCE((SELECT SUM(r.cost_micro_cents) FROM usage_records r WHERE r.organization_id = c.organization_id
			AND r.closed_at >= ? AND r.closed_at < ? AND r.closed_at >= c.first), 0) AS closed_micro_cents
		FROM (SELECT organization_id, MIN(created_at) AS first FROM ledger_entries WHERE kind = ? GROUP BY organization_id) c
		WHERE ? = '' OR c.organization_id = ?
		ORDER BY c.organization_id`,
		models.LedgerUsage, from, to, from, to, models.LedgerCredit, orgID, orgID).Find(&out).Error
	return out, err
}
