package store

import (
	"context"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"gpugraph/models"
)

// What an organization's money allows (docs/decisions/0042-metering.md):
// its settings (spend limit, low-balance threshold), its standing as the
// metering pass reads it, and its billing events. The metering service
// decides; these only read and write.

// BillingSettings reads organization orgID's settings; a zero value (no
// limit of its own, no threshold) when it has none.
func (s *Store) BillingSettings(ctx context.Context, orgID string) (models.BillingSettings, error) {
	var out []models.BillingSettings
	err := s.WithContext(ctx).Where("organization_id = ?", orgID).Limit(1).Find(&out).Error
	if err != nil || len(out) == 0 {
		return models.BillingSettings{OrganizationID: orgID}, err
	}
	return out[0], nil
}

// StartingOrganization is an organization as a create or a restart reads
// it: its row, and what decides whether a spend limit holds it.
type StartingOrganization struct {
	models.Organization `gorm:"embedded"`
	// SpendLimitCentsPerHour is its own spend limit (nil: the platform's
	// default).
	SpendLimitCentsPerHour *int64
	// Prepaid: it has been granted a credit.
	Prepaid bool
}

// OrganizationToStart reads organization id, which must exist, in tx,
// with its own spend limit and whether it is prepaid: in the statement
// that reads its row, so a create that no limit can hold reads nothing
// more for it.
func (s *Store) OrganizationToStart(tx *Txn, id string) (*StartingOrganization, error) {
	var out []StartingOrganization
	err := tx.db.Raw(`SELECT o.*, b.spend_limit_cents_per_hour,
		EXISTS (SELECT 1 FROM ledger_entries c WHERE c.organization_id = o.id AND c.kind = ?) AS prepaid
		FROM organizations o LEFT JOIN billing_settings b ON b.organization_id = o.id WHERE o.id = ?`,
		models.LedgerCredit, id).Find(&out).Error
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, gorm.ErrRecordNotFound
	}
	return &out[0], nil
}

// SetSpendLimit writes organization orgID's own spend limit (nil: the
// platform's default again).
func (s *Store) SetSpendLimit(ctx context.Context, orgID string, centsPerHour *int64) error {
	return s.WithContext(ctx).Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "organization_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"spend_limit_cents_per_hour"})}).
		Create(&models.BillingSettings{OrganizationID: orgID, SpendLimitCentsPerHour: centsPerHour}).Error
}

// SetLowBalanceHours writes organization orgID's low-balance threshold
// (nil: none) and clears whether its runway is below it, so the next pass
// raises the event afresh when it is.
func (s *Store) SetLowBalanceHours(ctx context.Context, orgID string, hours *int) error {
	return s.WithContext(ctx).Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "organization_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"low_balance_hours", "below_low_balance"})}).
		Create(&models.BillingSettings{OrganizationID: orgID, LowBalanceHours: hours}).Error
}

// MarkBelowLowBalance records whether organization orgID's runway is
// below its threshold, and answers whether that changed: of two passes
// that see the same crossing, one changes it (the row's lock orders them).
func (s *Store) MarkBelowLowBalance(tx *Txn, orgID string, below bool) (bool, error) {
	r := tx.db.Model(&models.BillingSettings{}).
		Where("organization_id = ? AND below_low_balance = ?", orgID, !below).Update("below_low_balance", below)
	return r.RowsAffected == 1, r.Error
}

// Standing is a prepaid organization's money as the metering pass reads
// it: its state, balance, what it runs and keeps, its low-balance
// threshold and whether its runway is below it.
type Standing struct {
	OrganizationID      string `gorm:"column:id"`
	State               models.OrgState
	BalanceMicroCents   int64
	RunningCentsPerHour int64
	StoppedGb           int64 `gorm:"column:stopped_gb"`
	LowBalanceHours     *int
	BelowLowBalance     bool
}

const standingSelect = `SELECT o.id, o.state,
	COALESCE((SELECT SUM(l.amount_micro_cents) FROM ledger_entries l WHERE l.organization_id = o.id), 0) AS balance_micro_cents,
	COALESCE((SELECT SUM(v.price_per_hour_cents) FROM vms v WHERE v.organization_id = o.id AND v.status = ? AND v.deleted_at IS NULL), 0) AS running_cents_per_hour,
	COALESCE((SELECT SUM(vol.size_gb) FROM volumes vol JOIN vms v ON v.id = vol.vm_id
		WHERE v.organization_id = o.id AND v.status = ? AND v.deleted_at IS NULL AND vol.deleted_at IS NULL), 0) AS stopped_gb,
	b.low_balance_hours, COALESCE(b.below_low_balance, ?) AS below_low_balance
	FROM organizations o LEFT JOIN billing_settings b ON b.organization_id = o.id
	WHERE EXISTS (SELECT 1 FROM ledger_entries c WHERE c.organization_id = o.id AND c.kind = ?)`

// PrepaidStandings reads every prepaid organization's Standing, by id.
func (s *Store) PrepaidStandings(ctx context.Context) ([]Standing, error) {
	var out []Standing
	err := s.WithContext(ctx).Raw(standingSelect+` ORDER BY o.id`,
		models.VMRunning, models.VMStopped, false, models.LedgerCredit).Find(&out).Error
	return out, err
}

// StandingOf reads organization orgID's Standing in tx; nil when it is
// not prepaid.
func (s *Store) StandingOf(tx *Txn, orgID string) (*Standing, error) {
	var out []Standing
	err := tx.db.Raw(standingSelect+` AND o.id = ?`,
		models.VMRunning, models.VMStopped, false, models.LedgerCredit, orgID).Find(&out).Error
	if err != nil || len(out) == 0 {
		return nil, err
	}
	return &out[0], nil
}

// AppendBillingEvent appends e to its organization's billing events, as
// the last write of tx: under its organization's billing lock (held to the
// commit, so one organization's events commit in the order their seqs are
// drawn, as the live feed's readers need; other organizations' do not
// wait) it draws e's Seq, the greatest of its organization's plus one, in
// a statement of its own (read after the lock is granted, it sees the
// last holder's event), and notifies the subscribers of every replica at
// commit.
func (s *Store) AppendBillingEvent(tx *Txn, e *models.BillingEvent) error {
	if err := s.advisoryLock(tx.db, billingLogLock, orgKey(e.OrganizationID)); err != nil {
		return err
	}
	if err := tx.db.Raw("SELECT COALESCE(MAX(seq), 0) + 1 FROM billing_events WHERE organization_id = ?", e.OrganizationID).
		Find(&e.Seq).Error; err != nil {
		return err
	}
	if err := tx.db.Create(e).Error; err != nil {
		return err
	}
	return s.note(tx.db, TopicBillingEvents, e.ID)
}

// BillingEvents reads organization orgID's billing events after its event
// after (a Seq), oldest first, at most limit.
func (s *Store) BillingEvents(ctx context.Context, orgID string, after int64, limit int) ([]models.BillingEvent, error) {
	var out []models.BillingEvent
	err := s.WithContext(ctx).Where("organization_id = ? AND seq > ?", orgID, after).Order("seq").Limit(limit).Find(&out).Error
	for i := range out {
		out[i].At = out[i].At.UTC()
	}
	return out, err
}

// BillingEventBounds answers the first and last Seq of organization
// orgID's billing events (0, 0 when it has none): billing events are kept
// for good, so the first is 1 once there is one.
func (s *Store) BillingEventBounds(ctx context.Context, orgID string) (oldest, newest int64, err error) {
	var b struct{ Oldest, Newest *int64 }
	err = s.WithContext(ctx).Raw("SELECT MIN(seq) AS oldest, MAX(seq) AS newest FROM billing_events WHERE organization_id = ?", orgID).Find(&b).Error
	return deref(b.Oldest), deref(b.Newest), err
}

// BillingSettingsChange is a change of an organization's settings: each
// setting is written only when its Set… is true (its value nil: none, or
// the platform's default for the spend limit).
type BillingSettingsChange struct {
	SetLowBalance          bool
	LowBalanceHours        *int
	SetSpendLimit          bool
	SpendLimitCentsPerHour *int64
}

// ChangeBillingSettings writes ch to organization orgID's settings in one
// statement (both settings or neither). A threshold written clears
// whether the runway is below it, so the next pass raises the event
// afresh when it is.
func (s *Store) ChangeBillingSettings(ctx context.Context, orgID string, ch BillingSettingsChange) error {
	var cols []string
	if ch.SetLowBalance {
		cols = append(cols, "low_balance_hours", "below_low_balance")
	}
	if ch.SetSpendLimit {
		cols = append(cols, "spend_limit_cents_per_hour")
	}
	if len(cols) == 0 {
		return nil
	}
	return s.WithContext(ctx).Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "organization_id"}},
		DoUpdates: clause.AssignmentColumns(cols)}).
		Create(&models.BillingSettings{OrganizationID: orgID, LowBalanceHours: ch.LowBalanceHours,
			SpendLimitCentsPerHour: ch.SpendLimitCentsPerHour}).Error
}

// SpendNow is what organization orgID's workloads cost an hour in tx, for
// its spend limit: the prices of those running, deploying or pending
// (what it runs and is starting), in cents, and the GB its stopped ones
// keep.
func (s *Store) SpendNow(tx *Txn, orgID string) (BurnSources, error) {
	var b BurnSources
	err := tx.db.Raw(`SELECT
		COALESCE((SELECT SUM(price_per_hour_cents) FROM vms WHERE organization_id = ? AND status IN ? AND deleted_at IS NULL), 0) AS running_cents_per_hour,
		COALESCE((SELECT SUM(vol.size_gb) FROM volumes vol JOIN vms ON vms.id = vol.vm_id
			WHERE vms.organization_id = ? AND vms.status = ? AND vms.deleted_at IS NULL AND vol.deleted_at IS NULL), 0) AS stopped_gb`,
		orgID, []models.VMStatus{models.VMRunning, models.VMDeploying, models.VMPending}, orgID, models.VMStopped).Find(&b).Error
	return b, err
}
