package models

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Metering and balances (docs/decisions/0042-metering.md). Money is an
// integer number of micro-cents (1e-6 cent), never a float.

// MicroCentsPerCent is how many micro-cents a cent is.
const MicroCentsPerCent = 1_000_000

// FormatCents writes an amount of micro-cents as a decimal number of
// cents, exactly: up to six decimals, no trailing zeros, no exponent
// (6225000 is "6.225", -500 "-0.0005", 2500000000 "2500"). It is how
// every amount is shown; no float is ever involved.
func FormatCents(micro int64) string {
	neg := micro < 0
	u := uint64(micro)
	if neg {
		u = -u
	}
	whole, frac := u/MicroCentsPerCent, u%MicroCentsPerCent
	s := strconv.FormatUint(whole, 10)
	if frac != 0 {
		f := strings.TrimRight(fmt.Sprintf("%06d", frac), "0")
		s += "." + f
	}
	if neg {
		s = "-" + s
	}
	return s
}

// FormatMillis writes milliseconds as a decimal number of seconds,
// exactly (1500 is "1.5").
func FormatMillis(ms int64) string {
	neg := ms < 0
	u := uint64(ms)
	if neg {
		u = -u
	}
	s := strconv.FormatUint(u/1000, 10)
	if f := u % 1000; f != 0 {
		s += "." + strings.TrimRight(fmt.Sprintf("%03d", f), "0")
	}
	if neg {
		s = "-" + s
	}
	return s
}

// UsageKind is what a usage record counts.
type UsageKind string

const (
	// UsageCompute: the seconds a workload ran, at its price per hour.
	UsageCompute UsageKind = "compute"
	// UsageStorage: the seconds a stopped workload kept its disk or
	// volume, at the catalog's price per GB-hour.
	UsageStorage UsageKind = "storage"
)

// UsageRecord is one closed period of one workload's usage of one kind.
// Periods start where the workload's metering cursor stood, so
// (VMID, Kind, PeriodStart) is unique, and never cross a UTC hour.
type UsageRecord struct {
	ID             int64 `gorm:"primaryKey;autoIncrement"`
	OrganizationID string
	VMID           string `gorm:"column:vm_id"`
	Kind           UsageKind
	PeriodStart    time.Time
	PeriodEnd      time.Time
	// Day is PeriodStart's UTC date, 2026-12-03.
	Day             string
	GPUModelID      *string `gorm:"column:gpu_model_id"`
	GPUCount        int     `gorm:"column:gpu_count"`
	StorageGb       int
	Milliseconds    int64
	GPUMilliseconds int64 `gorm:"column:gpu_milliseconds"`
	// CostMicroCents is the period's cost rounded down to the micro-cent,
	// the remainder carried to the workload's next period of the kind: a
	// workload's records add up to its exact cost rounded down once.
	CostMicroCents int64
	ClosedAt       time.Time
}

// TableName is the usage records' table.
func (UsageRecord) TableName() string { return "usage_records" }

// UsageCursor is how far a workload's usage is closed, and the state the
// event log left it in there.
type UsageCursor struct {
	VMID              string `gorm:"column:vm_id;primaryKey"`
	OrganizationID    string
	Through           time.Time
	LastEventID       int64
	Status            VMStatus
	PricePerHourCents int
	StorageGb         int
	// The remainders below one micro-cent of the exact cost so far, in
	// units of 1/3,600,000 µ¢ (µ¢ per hour × milliseconds).
	ComputeCarry int64
	StorageCarry int64
	// Done: terminated; nothing more accrues.
	Done bool
}

// TableName is the cursors' table.
func (UsageCursor) TableName() string { return "usage_cursors" }

// LedgerKind is what a ledger entry is.
type LedgerKind string

const (
	LedgerCredit     LedgerKind = "credit"
	LedgerUsage      LedgerKind = "usage"
	LedgerAdjustment LedgerKind = "adjustment"
)

// LedgerEntry is one line of an organization's ledger: positive adds to
// its balance, negative takes from it. Entries are never changed.
type LedgerEntry struct {
	ID               int64 `gorm:"primaryKey;autoIncrement"`
	OrganizationID   string
	Kind             LedgerKind
	AmountMicroCents int64
	Reason           string
	IdempotencyKey   string
	CreatedAt        time.Time `gorm:"autoCreateTime:false"`
}

// TableName is the ledger's table.
func (LedgerEntry) TableName() string { return "ledger_entries" }

// BillingSettings is what an organization's money allows besides its
// balance: its own spend limit (nil: the platform's default), its
// low-balance threshold (nil: none) and whether its runway is below that
// threshold now.
type BillingSettings struct {
	OrganizationID         string `gorm:"primaryKey"`
	SpendLimitCentsPerHour *int64
	LowBalanceHours        *int
	BelowLowBalance        bool
}

// TableName is the settings' table.
func (BillingSettings) TableName() string { return "billing_settings" }

// BillingEventKind names an organization's billing event.
type BillingEventKind string

const (
	// BillingLowBalance: the runway at the burn rate crossed below the
	// organization's threshold (once per crossing).
	BillingLowBalance BillingEventKind = "low_balance"
	// BillingBalanceExhausted: the balance no longer covered the next
	// metering period; what the organization ran was stopped.
	BillingBalanceExhausted BillingEventKind = "balance_exhausted"
	// BillingBalanceRestored: a credit made the organization active again.
	BillingBalanceRestored BillingEventKind = "balance_restored"
)

// BillingEvent is one billing event of an organization, with its balance
// and burn rate then.
type BillingEvent struct {
	ID             int64 `gorm:"primaryKey;autoIncrement"`
	OrganizationID string
	// Seq is the event's id as its organization sees it: its own billing
	// events counted (1, 2, 3 … in commit order), so the ids a tenant
	// reads show nothing of the others' events.
	Seq                   int64
	Kind                  BillingEventKind
	BalanceMicroCents     int64
	BurnMicroCentsPerHour int64
	ThresholdHours        *int
	Stopped               int
	At                    time.Time `gorm:"autoCreateTime:false"`
}

// TableName is the billing events' table.
func (BillingEvent) TableName() string { return "billing_events" }
