package metering

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"time"

	"gpugraph/internal/auth"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/store"
	"gpugraph/models"
)

// The codes the billing paths answer besides the generic ones.
const (
	CodeOrganizationNotFound = "ORGANIZATION_NOT_FOUND"
	CodeIdempotencyKeyReused = "IDEMPOTENCY_KEY_REUSED"
)

// MaxUsageWindow is the longest window Usage sums over.
const MaxUsageWindow = 366 * 24 * time.Hour

// maxCreditCents bounds one credit or adjustment (a hundred million
// dollars), so that no sum of a ledger comes near int64's range in µ¢.
const maxCreditCents = 10_000_000_000

// MayAdminister is the permission an adjustment, the reconciliation and
// any organization's credit need: the platform operator's, nodes.admin
// (as the fleet's organization states).
func (s *Service) MayAdminister(caller *auth.Caller) error {
	return caller.Require(auth.NodesAdmin)
}

// MayGrant is the gate of a credit (SPEC §10: "admin or nodes.admin"):
// nodes.admin grants to any organization; admin, its own organization's
// administrator, to its own only (Grant answers another as a missing one).
// An operator who must not let an organization credit itself hands it no
// admin key: admin already holds the organization's keys, so it could
// mint itself any other permission but nodes.admin.
func (s *Service) MayGrant(caller *auth.Caller) error {
	if caller.Can(auth.Admin) {
		return nil
	}
	return caller.Require(auth.NodesAdmin)
}

// MayReadMoney is the gate of the billing reads: billing.read, admin (its
// own organization's administrator) or nodes.admin (the operator's). Which
// organization the caller may read is MayRead's.
func (s *Service) MayReadMoney(caller *auth.Caller) error {
	if caller.Can(auth.Admin) || caller.Can(auth.NodesAdmin) {
		return nil
	}
	return caller.Require(auth.BillingRead)
}

// MayRead checks that the caller may read organization orgID's money: any
// with nodes.admin (the operator's); its own with billing.read or admin.
// Another organization answers as a missing one (404).
func (s *Service) MayRead(caller *auth.Caller, orgID string) error {
	if caller.Can(auth.NodesAdmin) {
		return nil
	}
	if err := s.MayReadMoney(caller); err != nil {
		return err
	}
	if orgID != caller.OrganizationID {
		return apierr.NotFound(CodeOrganizationNotFound, "there is no organization %q", orgID)
	}
	return nil
}

// Grant appends a credit of amountCents to organization orgID's ledger,
// with its reason; the first credit makes the organization prepaid. A
// second grant with the same idempotency key answers the first one's
// entry (when it asked the same) or a 409; an empty key is a fresh one.
func (s *Service) Grant(ctx context.Context, caller *auth.Caller, orgID string, amountCents int64, reason, key string) (*models.LedgerEntry, error) {
	if err := s.MayGrant(caller); err != nil {
		return nil, err
	}
	if amountCents <= 0 || amountCents > maxCreditCents {
		return nil, apierr.BadRequest("amountCents %d is not a whole number of cents from 1 to %d", amountCents, int64(maxCreditCents))
	}
	return s.appendEntry(ctx, caller, orgID, models.LedgerCredit, amountCents, reason, key)
}

// Adjust appends an adjustment of amountCents (either sign, not 0) to
// organization orgID's ledger, with its reason.
func (s *Service) Adjust(ctx context.Context, caller *auth.Caller, orgID string, amountCents int64, reason, key string) (*models.LedgerEntry, error) {
	if err := s.MayAdminister(caller); err != nil {
		return nil, err
	}
	if amountCents == 0 || amountCents > maxCreditCents || amountCents < -maxCreditCents {
		return nil, apierr.BadRequest("amountCents %d is not a whole number of cents from %d to %d, other than 0",
			amountCents, -int64(maxCreditCents), int64(maxCreditCents))
	}
	return s.appendEntry(ctx, caller, orgID, models.LedgerAdjustment, amountCents, reason, key)
}

// appendEntry checks the entry's reason and key, then the organization:
// one that does not exist, or that is not the caller's own for a caller
// without nodes.admin, answers 404 the same way, after the same checks.
func (s *Service) appendEntry(ctx context.Context, caller *auth.Caller, orgID string, kind models.LedgerKind, cents int64, reason, key string) (*models.LedgerEntry, error) {
	reason = strings.TrimSpace(reason)
	if reason == "" {
		return nil, apierr.BadRequest("reason is missing")
	}
	if len(reason) > 1024 {
		return nil, apierr.BadRequest("reason is longer than 1024 bytes")
	}
	if len(key) > 255 {
		return nil, apierr.BadRequest("idempotency key is longer than 255 bytes")
	}
	if !caller.Can(auth.NodesAdmin) && orgID != caller.OrganizationID {
		return nil, apierr.NotFound(CodeOrganizationNotFound, "there is no organization %q", orgID)
	}
	if err := s.known(ctx, orgID); err != nil {
		return nil, err
	}
	if key == "" {
		key = randomKey()
	}
	e := &models.LedgerEntry{OrganizationID: orgID, Kind: kind, AmountMicroCents: cents * models.MicroCentsPerCent,
		Reason: reason, IdempotencyKey: string(kind) + ":" + key, CreatedAt: s.clock().UTC()}
	var out *models.LedgerEntry
	err := s.store.InTx(ctx, func(tx *store.Txn) error {
		written, err := s.store.AppendLedger(tx, []*models.LedgerEntry{e})
		if err != nil {
			return err
		}
		if len(written) == 1 {
			out = written[0]
			if cents > 0 {
				return s.restore(tx, orgID)
			}
			return nil
		}
		was, err := s.store.LedgerEntryByKey(tx, orgID, e.IdempotencyKey)
		if err != nil {
			return err
		}
		if was == nil {
			return errors.New("metering: an entry's key conflicted and is not there")
		}
		if was.AmountMicroCents != e.AmountMicroCents || was.Reason != e.Reason {
			return apierr.Conflict(CodeIdempotencyKeyReused,
				"the idempotency key was used for another %s of organization %s", kind, orgID)
		}
		was.CreatedAt = was.CreatedAt.UTC()
		out = was
		return nil
	})
	return out, err
}

func randomKey() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return "auto-" + hex.EncodeToString(b)
}

// Balance is an organization's money now.
type Balance struct {
	OrganizationID string
	// Prepaid: it has been granted a credit; a postpaid organization's
	// usage is recorded and nothing is debited.
	Prepaid bool
	// BalanceMicroCents is its ledger's sum.
	BalanceMicroCents int64
	// BurnMicroCentsPerHour is what it runs now costs an hour: its
	// running workloads' prices and its stopped ones' kept storage.
	BurnMicroCentsPerHour int64
	// RunwayHours is how long the balance lasts at that rate; nil when
	// postpaid or when nothing burns.
	RunwayHours *float64
	// SpendLimitCentsPerHour is the most its workloads may cost an hour
	// together (its own limit, or, prepaid, the platform's default): a
	// create or restart that would pass it is refused; nil when it has
	// none.
	SpendLimitCentsPerHour *int64
}

// Balance answers organization orgID's balance, burn rate and runway.
func (s *Service) Balance(ctx context.Context, caller *auth.Caller, orgID string) (*Balance, error) {
	if err := s.MayRead(caller, orgID); err != nil {
		return nil, err
	}
	if err := s.known(ctx, orgID); err != nil {
		return nil, err
	}
	bal, prepaid, err := s.store.LedgerBalance(ctx, orgID)
	if err != nil {
		return nil, err
	}
	burn, err := s.store.Burn(ctx, orgID)
	if err != nil {
		return nil, err
	}
	price, err := s.store.StoragePriceNow(ctx)
	if err != nil {
		return nil, err
	}
	out := &Balance{OrganizationID: orgID, Prepaid: prepaid, BalanceMicroCents: bal,
		BurnMicroCentsPerHour: burn.RunningCentsPerHour*models.MicroCentsPerCent + burn.StoppedGb*price}
	if out.SpendLimitCentsPerHour, err = s.SpendLimit(ctx, orgID, prepaid); err != nil {
		return nil, err
	}
	if prepaid && out.BurnMicroCentsPerHour > 0 {
		h := max(float64(bal), 0) / float64(out.BurnMicroCentsPerHour)
		out.RunwayHours = &h
	}
	return out, nil
}

// Organization reads organization orgID for a caller who may read its
// money (MayRead): 404 ORGANIZATION_NOT_FOUND when there is none.
func (s *Service) Organization(ctx context.Context, caller *auth.Caller, orgID string) (*models.Organization, error) {
	if err := s.MayRead(caller, orgID); err != nil {
		return nil, err
	}
	if err := s.known(ctx, orgID); err != nil {
		return nil, err
	}
	var o *models.Organization
	err := s.store.InTx(ctx, func(tx *store.Txn) error {
		var err error
		o, err = s.store.Organization(tx, orgID)
		return err
	})
	return o, err
}

func (s *Service) known(ctx context.Context, orgID string) error {
	ok, err := s.store.OrganizationExists(ctx, orgID)
	if err != nil {
		return err
	}
	if !ok {
		return apierr.NotFound(CodeOrganizationNotFound, "there is no organization %q", orgID)
	}
	return nil
}

// UsageGroups are the groupBy values Usage takes.
var UsageGroups = []store.UsageGroup{store.ByWorkload, store.ByGPUModel, store.ByProject, store.ByDay}

// UsageLine is one group's usage: the seconds it ran (compute), its
// GPU-seconds, and its cost (compute and storage), in milliseconds and
// micro-cents.
type UsageLine struct {
	Key             string
	Milliseconds    int64
	GPUMilliseconds int64
	CostMicroCents  int64
}

// Usage is an organization's usage over a window.
type Usage struct {
	From, To            time.Time
	Lines               []UsageLine
	TotalCostMicroCents int64
}

// Usage sums organization orgID's closed usage whose periods start in
// [from, to), by groupBy. Periods never cross a UTC hour, so a window of
// whole hours reads exactly the usage within it.
func (s *Service) Usage(ctx context.Context, caller *auth.Caller, orgID string, from, to time.Time, groupBy string) (*Usage, error) {
	if err := s.MayRead(caller, orgID); err != nil {
		return nil, err
	}
	g := store.UsageGroup(groupBy)
	known := false
	for _, u := range UsageGroups {
		known = known || u == g
	}
	if !known {
		return nil, apierr.BadRequest("groupBy %q is not one of workload, gpuModel, project, day", groupBy)
	}
	if !from.Before(to) {
		return nil, apierr.BadRequest("from %s is not before to %s", from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339))
	}
	if to.Sub(from) > MaxUsageWindow {
		return nil, apierr.BadRequest("to is more than 366 days after from")
	}
	if err := s.known(ctx, orgID); err != nil {
		return nil, err
	}
	sums, err := s.store.Usage(ctx, orgID, from.UTC(), to.UTC(), g)
	if err != nil {
		return nil, err
	}
	out := &Usage{From: from.UTC(), To: to.UTC(), Lines: make([]UsageLine, len(sums))}
	for i, u := range sums {
		out.Lines[i] = UsageLine{Key: u.Key, Milliseconds: u.Milliseconds, GPUMilliseconds: u.GPUMilliseconds,
			CostMicroCents: u.CostMicroCents}
		out.TotalCostMicroCents += u.CostMicroCents
	}
	return out, nil
}

// MaxLedgerPage is the most entries one Ledger read answers.
const MaxLedgerPage = 500

// Ledger reads a page of organization orgID's ledger: at most limit
// entries after the entry id after, oldest first, and whether more
// follow.
func (s *Service) Ledger(ctx context.Context, caller *auth.Caller, orgID string, after int64, limit int) ([]models.LedgerEntry, bool, error) {
	return readPage(ctx, s, caller, orgID, "a ledger entry", after, limit, MaxLedgerPage, s.store.LedgerEntries)
}

// readPage reads a page of one of organization orgID's money lists (the
// ledger, the billing events), what naming its rows: the caller may read
// the organization's money, after is 0 or a row's id, limit is 1 to max;
// it answers at most limit rows after after, oldest first, and whether
// more follow (read reads one past the page to know).
func readPage[T any](ctx context.Context, s *Service, caller *auth.Caller, orgID, what string, after int64, limit, max int,
	read func(context.Context, string, int64, int) ([]T, error)) ([]T, bool, error) {
	if err := s.MayRead(caller, orgID); err != nil {
		return nil, false, err
	}
	if after < 0 {
		return nil, false, apierr.BadRequest("after must be %s id (0 or more), got %d", what, after)
	}
	if limit < 1 || limit > max {
		return nil, false, apierr.BadRequest("limit must be between 1 and %d, got %d", max, limit)
	}
	if err := s.known(ctx, orgID); err != nil {
		return nil, false, err
	}
	rows, err := read(ctx, orgID, after, limit+1)
	if err != nil {
		return nil, false, err
	}
	if len(rows) > limit {
		return rows[:limit], true, nil
	}
	return rows, false, nil
}

// SpendLimit answers organization orgID's spend limit in cents per hour:
// its own, or else, when it is prepaid, the platform's default (a
// postpaid organization has none but its own); nil when that is 0 (none).
func (s *Service) SpendLimit(ctx context.Context, orgID string, prepaid bool) (*int64, error) {
	set, err := s.store.BillingSettings(ctx, orgID)
	if err != nil {
		return nil, err
	}
	var v int64
	switch {
	case set.SpendLimitCentsPerHour != nil:
		v = *set.SpendLimitCentsPerHour
	case prepaid:
		v = s.SpendLimitCentsPerHour
	}
	if v <= 0 {
		return nil, nil
	}
	return &v, nil
}
