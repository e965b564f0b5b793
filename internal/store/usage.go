package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm/clause"

	"gpugraph/models"
)

// Metering's statements (docs/decisions/0042-metering.md): the cursors
// that say how far each workload's usage is closed, the usage records the
// metering pass closes, the catalog's storage price. The pass
// (internal/services/metering) decides what a period costs; these only
// read and write.

// UnmeteredVM is a VM or pod the metering pass has no cursor for yet,
// with its first kept event (nil when it has none: a fixture's row).
type UnmeteredVM struct {
	ID                string
	OrganizationID    string
	Status            models.VMStatus
	PricePerHourCents int
	// KeptGb is the size of its live disk or volume.
	KeptGb     int
	FirstEvent *models.VMEvent `gorm:"-"`
	FirstID    *int64          `gorm:"column:first_id"`
}

// UnmeteredVMs reads, by id, at most limit rows of vms that have no
// metering cursor, each with its first kept event.
func (s *Store) UnmeteredVMs(tx *Txn, limit int) ([]UnmeteredVM, error) {
	var out []UnmeteredVM
	err := tx.db.Raw(`SELECT v.id, v.organization_id, v.status, v.price_per_hour_cents,
		COALESCE((SELECT SUM(size_gb) FROM volumes WHERE volumes.vm_id = v.id AND volumes.deleted_at IS NULL), 0) AS kept_gb,
		(SELECT MIN(e.id) FROM vm_events e WHERE e.vm_id = v.id) AS first_id
		FROM vms v WHERE NOT EXISTS (SELECT 1 FROM usage_cursors c WHERE c.vm_id = v.id)
		ORDER BY v.id LIMIT ?`, limit).Find(&out).Error
	if err != nil || len(out) == 0 {
		return out, err
	}
	var ids []int64
	for _, v := range out {
		if v.FirstID != nil {
			ids = append(ids, *v.FirstID)
		}
	}
	byID := map[int64]*models.VMEvent{}
	for part := range slices.Chunk(ids, 500) {
		var evs []*models.VMEvent
		if err := tx.db.Where("id IN ?", part).Find(&evs).Error; err != nil {
			return nil, err
		}
		for _, e := range evs {
			byID[e.ID] = e
		}
	}
	for i := range out {
		if out[i].FirstID != nil {
			out[i].FirstEvent = byID[*out[i].FirstID]
		}
	}
	return out, nil
}

// CreateCursors writes the cursors cs; one some replica wrote first is
// kept as it is.
func (s *Store) CreateCursors(tx *Txn, cs []models.UsageCursor) error {
	if len(cs) == 0 {
		return nil
	}
	return tx.db.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "vm_id"}}, DoNothing: true}).
		CreateInBatches(cs, 200).Error
}

// OpenCursorIDs answers, by id after after, at most limit workloads whose
// usage is not closed up to closeTo and may have some to close: running,
// stopped with storage kept, or with events the cursor has not applied.
// The others accrue nothing, so their cursors wait for their next event.
func (s *Store) OpenCursorIDs(ctx context.Context, closeTo time.Time, after string, limit int) ([]string, error) {
	var ids []string
	err := s.WithContext(ctx).Raw(`SELECT c.vm_id FROM usage_cursors c
		WHERE c.done = ? AND c.through < ? AND c.vm_id > ?
		AND (c.status = ? OR (c.status = ? AND c.storage_gb > 0)
			OR EXISTS (SELECT 1 FROM vm_events e WHERE e.vm_id = c.vm_id AND e.id > c.last_event_id))
		ORDER BY c.vm_id LIMIT ?`, false, closeTo, after, models.VMRunning, models.VMStopped, limit).Find(&ids).Error
	return ids, err
}

// LockCursors locks and reads the cursors of ids that are still open
// before closeTo, by id. On PostgreSQL a cursor another pass holds is
// skipped (that pass closes it); on SQLite the transaction holds the
// write lock, so it reads what the last pass committed.
func (s *Store) LockCursors(tx *Txn, ids []string, closeTo time.Time) ([]models.UsageCursor, error) {
	q := tx.db.Where("vm_id IN ? AND done = ? AND through < ?", ids, false, closeTo).Order("vm_id")
	if s.Dialect == Postgres {
		q = q.Clauses(clause.Locking{Strength: "UPDATE", Options: "SKIP LOCKED"})
	}
	var out []models.UsageCursor
	err := q.Find(&out).Error
	for i := range out {
		out[i].Through = out[i].Through.UTC()
	}
	return out, err
}

// EventsToMeter reads the events each cursor of cs has not applied yet,
// by workload and id.
func (s *Store) EventsToMeter(tx *Txn, cs []models.UsageCursor) (map[string][]*models.VMEvent, error) {
	out := map[string][]*models.VMEvent{}
	last := map[string]int64{}
	var ids []string
	for _, c := range cs {
		ids = append(ids, c.VMID)
		last[c.VMID] = c.LastEventID
	}
	for part := range slices.Chunk(ids, 500) {
		var evs []*models.VMEvent
		err := tx.db.Raw(`SELECT e.* FROM vm_events e JOIN usage_cursors c ON c.vm_id = e.vm_id
			WHERE e.vm_id IN ? AND e.id > c.last_event_id ORDER BY e.vm_id, e.id`, part).Find(&evs).Error
		if err != nil {
			return nil, err
		}
		for _, e := range evs {
			if e.ID > last[e.VMID] {
				e.At = e.At.UTC()
				out[e.VMID] = append(out[e.VMID], e)
			}
		}
	}
	return out, nil
}

// MeteredVM is what a usage record says of its workload.
type MeteredVM struct {
	ID                string
	GPUModelID        *string `gorm:"column:gpu_model_id"`
	GPUCount          int     `gorm:"column:gpu_count"`
	PricePerHourCents int
}

// MeteredVMs reads the workloads ids (deleted rows too) by id.
func (s *Store) MeteredVMs(tx *Txn, ids []string) (map[string]MeteredVM, error) {
	out := map[string]MeteredVM{}
	for part := range slices.Chunk(ids, 500) {
		var rows []MeteredVM
		if err := tx.db.Table("vms").Select("id, gpu_model_id, gpu_count, price_per_hour_cents").
			Where("id IN ?", part).Find(&rows).Error; err != nil {
			return nil, err
		}
		for _, r := range rows {
			out[r.ID] = r
		}
	}
	return out, nil
}

// StoragePrice answers the catalog's price of a kept disk or volume, in
// micro-cents per GB-hour.
func (s *Store) StoragePrice(tx *Txn) (int64, error) {
	var p []int64
	err := tx.db.Raw("SELECT micro_cents_per_gb_hour FROM storage_prices WHERE kind = ?", "volume").Find(&p).Error
	if err != nil || len(p) == 0 {
		return 0, err
	}
	return p[0], nil
}

// StoragePriceNow is StoragePrice outside a transaction.
func (s *Store) StoragePriceNow(ctx context.Context) (int64, error) {
	var p int64
	err := s.InTx(ctx, func(tx *Txn) (err error) { p, err = s.StoragePrice(tx); return err })
	return p, err
}

var usageColumns = []string{"organization_id", "vm_id", "kind", "period_start", "period_end", "day", "gpu_model_id",
	"gpu_count", "storage_gb", "milliseconds", "gpu_milliseconds", "cost_micro_cents", "closed_at"}

// InsertUsage writes the records recs, each unless a record of its
// workload, kind and period start is there already (the unique key: a
// second is never recorded twice), and answers those it wrote, with their
// ids.
func (s *Store) InsertUsage(tx *Txn, recs []*models.UsageRecord) ([]*models.UsageRecord, error) {
	var written []*models.UsageRecord
	for part := range slices.Chunk(recs, 200) {
		var sb strings.Builder
		sb.WriteString("INSERT INTO usage_records (" + strings.Join(usageColumns, ", ") + ") VALUES ")
		args := make([]any, 0, len(part)*len(usageColumns))
		row := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(usageColumns)), ", ") + ")"
		for i, r := range part {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(row)
			args = append(args, r.OrganizationID, r.VMID, r.Kind, r.PeriodStart, r.PeriodEnd, r.Day, r.GPUModelID,
				r.GPUCount, r.StorageGb, r.Milliseconds, r.GPUMilliseconds, r.CostMicroCents, r.ClosedAt)
		}
		sb.WriteString(" ON CONFLICT (vm_id, kind, period_start) DO NOTHING RETURNING id, vm_id, kind, period_start")
		var got []struct {
			ID          int64
			VMID        string `gorm:"column:vm_id"`
			Kind        models.UsageKind
			PeriodStart time.Time
		}
		if err := tx.db.Raw(sb.String(), args...).Find(&got).Error; err != nil {
			return nil, err
		}
		type key struct {
			vm   string
			kind models.UsageKind
			at   int64
		}
		ids := make(map[key]int64, len(got))
		for _, g := range got {
			ids[key{g.VMID, g.Kind, g.PeriodStart.UnixNano()}] = g.ID
		}
		for _, r := range part {
			if id, ok := ids[key{r.VMID, r.Kind, r.PeriodStart.UnixNano()}]; ok {
				r.ID = id
				written = append(written, r)
			}
		}
	}
	return written, nil
}

var cursorColumns = []string{"vm_id", "organization_id", "through", "last_event_id", "status", "price_per_hour_cents",
	"storage_gb", "compute_carry", "storage_carry", "done"}

// SaveCursors writes the cursors cs, which the caller locked in tx: one
// statement for up to 200 (an upsert of rows that are there, which both
// engines type from the table, where an UPDATE … FROM (VALUES …) would
// need PostgreSQL's casts).
func (s *Store) SaveCursors(tx *Txn, cs []models.UsageCursor) error {
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(cursorColumns)), ", ") + ")"
	var set []string
	for _, c := range cursorColumns[2:] {
		set = append(set, c+" = excluded."+c)
	}
	for part := range slices.Chunk(cs, 200) {
		var sb strings.Builder
		sb.WriteString("INSERT INTO usage_cursors (" + strings.Join(cursorColumns, ", ") + ") VALUES ")
		args := make([]any, 0, len(part)*len(cursorColumns))
		for i, c := range part {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(row)
			args = append(args, c.VMID, c.OrganizationID, c.Through, c.LastEventID, c.Status, c.PricePerHourCents,
				c.StorageGb, c.ComputeCarry, c.StorageCarry, c.Done)
		}
		sb.WriteString(" ON CONFLICT (vm_id) DO UPDATE SET " + strings.Join(set, ", "))
		if err := tx.db.Exec(sb.String(), args...).Error; err != nil {
			return err
		}
	}
	return nil
}

// UsageCursors reads every cursor of the organization's workloads, by id
// (tests and the balance's burn rate read the state the pass keeps).
func (s *Store) UsageCursors(ctx context.Context, orgID string) ([]models.UsageCursor, error) {
	var out []models.UsageCursor
	err := s.WithContext(ctx).Where("organization_id = ?", orgID).Order("vm_id").Find(&out).Error
	return out, err
}

// UsageRecordsOf reads the usage records of one workload, by kind and
// period.
func (s *Store) UsageRecordsOf(ctx context.Context, vmID string) ([]models.UsageRecord, error) {
	var out []models.UsageRecord
	err := s.WithContext(ctx).Where("vm_id = ?", vmID).Order("kind, period_start").Find(&out).Error
	return out, err
}

// CostsOf sums the cost of the usage records of each of vmIDs that is the
// organization's, in micro-cents: every id of the organization's is in
// the answer (0 when it has none).
func (s *Store) CostsOf(ctx context.Context, orgID string, vmIDs []string) (map[string]int64, error) {
	out := make(map[string]int64, len(vmIDs))
	if len(vmIDs) == 0 {
		return out, nil
	}
	var rows []struct {
		ID   string
		Cost int64
	}
	err := s.WithContext(ctx).Raw(`SELECT vms.id AS id, COALESCE(SUM(u.cost_micro_cents), 0) AS cost
		FROM vms LEFT JOIN usage_records u ON u.vm_id = vms.id AND u.organization_id = vms.organization_id
		WHERE vms.organization_id = ? AND vms.id IN ? GROUP BY vms.id`, orgID, vmIDs).Find(&rows).Error
	for _, r := range rows {
		out[r.ID] = r.Cost
	}
	return out, err
}

// UsageGroup names what Usage sums by.
type UsageGroup string

const (
	ByWorkload UsageGroup = "workload"
	ByGPUModel UsageGroup = "gpuModel"
	ByProject  UsageGroup = "project"
	ByDay      UsageGroup = "day"
)

// usageKeys are the group's key expressions: constants of this package.
// A VM or pod of the API belongs to no Run:ai project, so its project is
// the empty key.
var usageKeys = map[UsageGroup]string{
	ByWorkload: "vm_id",
	ByGPUModel: "COALESCE(gpu_model_id, '')",
	ByProject:  "''",
	ByDay:      "day",
}

// UsageSum is one group's usage.
type UsageSum struct {
	Key             string `gorm:"column:group_key"`
	Milliseconds    int64
	GPUMilliseconds int64 `gorm:"column:gpu_milliseconds"`
	CostMicroCents  int64
}

// Usage sums the organization's usage records whose period starts in
// [from, to), by group g, by key.
func (s *Store) Usage(ctx context.Context, orgID string, from, to time.Time, g UsageGroup) ([]UsageSum, error) {
	key, ok := usageKeys[g]
	if !ok {
		return nil, fmt.Errorf("store: no usage group %q", g)
	}
	var out []UsageSum
	// Compute's milliseconds are the running time; storage's are billed
	// apart and counted in the cost only.
	err := s.WithContext(ctx).Raw(`SELECT `+key+` AS group_key,
		COALESCE(SUM(CASE WHEN kind = ? THEN milliseconds ELSE 0 END), 0) AS milliseconds,
		COALESCE(SUM(gpu_milliseconds), 0) AS gpu_milliseconds,
		COALESCE(SUM(cost_micro_cents), 0) AS cost_micro_cents
		FROM usage_records WHERE organization_id = ? AND period_start >= ? AND period_start < ?
		GROUP BY `+key+` ORDER BY 1`, models.UsageCompute, orgID, from, to).Find(&out).Error
	return out, err
}

// BurnSources are what an organization runs now, for its burn rate: the
// prices per hour of its running workloads and the GB its stopped ones
// keep.
type BurnSources struct {
	RunningCentsPerHour int64
	StoppedGb           int64
}

// Burn reads the organization's BurnSources.
func (s *Store) Burn(ctx context.Context, orgID string) (BurnSources, error) {
	var b BurnSources
	err := s.WithContext(ctx).Raw(`SELECT
		COALESCE((SELECT SUM(price_per_hour_cents) FROM vms WHERE organization_id = ? AND status = ? AND deleted_at IS NULL), 0) AS running_cents_per_hour,
		COALESCE((SELECT SUM(vol.size_gb) FROM volumes vol JOIN vms ON vms.id = vol.vm_id
			WHERE vms.organization_id = ? AND vms.status = ? AND vms.deleted_at IS NULL AND vol.deleted_at IS NULL), 0) AS stopped_gb`,
		orgID, models.VMRunning, orgID, models.VMStopped).Find(&b).Error
	return b, err
}
