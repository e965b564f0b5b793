package metering

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"gpugraph/internal/auth"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/store"
	"gpugraph/models"
)

// The actor of the transitions the metering pass makes.
var meteringActor = models.Actor{Kind: models.ActorPlatform, ID: "metering"}

// burn is what a Standing's organization runs costs an hour, µ¢: its
// running workloads' prices and its stopped ones' kept storage.
func burn(st store.Standing, storagePrice int64) int64 {
	return st.RunningCentsPerHour*models.MicroCentsPerCent + st.StoppedGb*storagePrice
}

// coversNextPeriod reports whether a balance covers the next metering
// period (interval) at burn µ¢ per hour: balance ≥ burn × interval,
// computed exactly in µ¢ × milliseconds.
func coversNextPeriod(balance, burnPerHour int64, interval time.Duration) bool {
	if burnPerHour <= 0 {
		return balance >= 0
	}
	ms := interval.Milliseconds()
	// balance × MsPerHour ≥ burn × ms, without overflowing int64: both
	// sides are divided by MsPerHour first when large.
	need := burnPerHour / MsPerHour * ms
	rem := burnPerHour % MsPerHour * ms
	needCeil := need + (rem+MsPerHour-1)/MsPerHour
	return balance >= needCeil
}

// belowThreshold reports whether the runway (balance over burn) is below
// hours: balance < burn × hours.
func belowThreshold(balance, burnPerHour int64, hours int) bool {
	if burnPerHour <= 0 {
		return false
	}
	return balance < burnPerHour*int64(hours)
}

// settle is the pass's last step, after it debits: for every prepaid
// organization, a balance that no longer covers the next period of what
// it runs stops its running, deploying and interrupted workloads
// (balance-ran-out) and makes it balance exhausted; a runway that crossed
// below its threshold raises one low_balance event, and one that rose
// back above it re-arms the event.
func (s *Service) settle(ctx context.Context, res *Result) error {
	standings, err := s.store.PrepaidStandings(ctx)
	if err != nil {
		return err
	}
	price, err := s.store.StoragePriceNow(ctx)
	if err != nil {
		return err
	}
	for _, st := range standings {
		b := burn(st, price)
		if st.LowBalanceHours != nil {
			below := belowThreshold(st.BalanceMicroCents, b, *st.LowBalanceHours)
			if below != st.BelowLowBalance {
				raised, err := s.markLowBalance(ctx, st, b, below)
				if err != nil {
					return err
				}
				if raised {
					res.LowBalance++
				}
			}
		}
		if st.State == models.OrgStateActive && !coversNextPeriod(st.BalanceMicroCents, b, s.Interval) {
			stopped, done, err := s.exhaust(ctx, st.OrganizationID)
			if err != nil {
				return err
			}
			if done {
				res.Exhausted++
				res.Stopped += stopped
			}
		}
	}
	return nil
}

// markLowBalance records that st's organization's runway is below its
// threshold (or not), and raises the low_balance event when this call is
// the one that crossed below; another replica's pass that saw the same
// crossing changes nothing.
func (s *Service) markLowBalance(ctx context.Context, st store.Standing, burn int64, below bool) (bool, error) {
	raised := false
	err := s.store.InTx(ctx, func(tx *store.Txn) error {
		changed, err := s.store.MarkBelowLowBalance(tx, st.OrganizationID, below)
		if err != nil || !changed || !below {
			return err
		}
		raised = true
		return s.store.AppendBillingEvent(tx, &models.BillingEvent{OrganizationID: st.OrganizationID,
			Kind: models.BillingLowBalance, BalanceMicroCents: st.BalanceMicroCents, BurnMicroCentsPerHour: burn,
			ThresholdHours: st.LowBalanceHours, At: s.clock().UTC()})
	})
	return raised, err
}

// exhaust stops organization orgID's running, deploying and interrupted
// workloads with auto_stopped_insufficient_balance and makes it balance
// exhausted, in one transaction, when (read again under its locks) it is
// still active and its balance still does not cover the next period; it
// answers how many it stopped and whether it did. Its workloads are
// locked before it, as an operator's state change locks them (a restart
// locks its row and then reads the organization), so a restart either
// finished before or answers 402 after; of two passes the second finds
// it exhausted already.
func (s *Service) exhaust(ctx context.Context, orgID string) (int64, bool, error) {
	var stopped int64
	done := false
	err := s.store.InTx(ctx, func(tx *store.Txn) error {
		if err := s.store.LockOrganizationWorkloads(tx, orgID); err != nil {
			return err
		}
		st, b, err := s.lockedStanding(tx, orgID, models.OrgStateActive)
		if err != nil || st == nil || coversNextPeriod(st.BalanceMicroCents, b, s.Interval) {
			return err
		}
		now := s.clock().UTC()
		if stopped, err = s.store.ApplyToWorkloads(tx, store.Workloads{OrganizationID: orgID},
			store.Change{Transition: models.BalanceRanOut, Actor: meteringActor}, now); err != nil {
			return err
		}
		if err := s.store.SetOrganizationState(tx, orgID, models.OrgStateBalanceExhausted); err != nil {
			return err
		}
		done = true
		return s.store.AppendBillingEvent(tx, &models.BillingEvent{OrganizationID: orgID,
			Kind: models.BillingBalanceExhausted, BalanceMicroCents: st.BalanceMicroCents, BurnMicroCentsPerHour: b,
			Stopped: int(stopped), At: now})
	})
	if err != nil {
		return 0, false, fmt.Errorf("metering: balance of %s ran out: %w", orgID, err)
	}
	return stopped, done, nil
}

// lockedStanding locks organization orgID in tx and, when it is in state,
// reads its standing and its burn an hour (in µ¢) under that lock: the
// one read the automatic stop and the restore decide on. A nil standing
// means the organization is gone or in another state: nothing to do.
func (s *Service) lockedStanding(tx *store.Txn, orgID string, state models.OrgState) (*store.Standing, int64, error) {
	org, err := s.store.LockOrganization(tx, orgID)
	if err != nil || org == nil || org.State != state {
		return nil, 0, err
	}
	st, err := s.store.StandingOf(tx, orgID)
	if err != nil || st == nil {
		return nil, 0, err
	}
	price, err := s.store.StoragePrice(tx)
	if err != nil {
		return nil, 0, err
	}
	return st, burn(*st, price), nil
}

// restore makes organization orgID active again in tx, after an entry
// that added to its ledger, when it is balance exhausted and its balance
// now covers the next period of what it runs (its kept storage: what was
// stopped stays stopped until its owner restarts it).
func (s *Service) restore(tx *store.Txn, orgID string) error {
	st, b, err := s.lockedStanding(tx, orgID, models.OrgStateBalanceExhausted)
	if err != nil || st == nil || st.BalanceMicroCents <= 0 || !coversNextPeriod(st.BalanceMicroCents, b, s.Interval) {
		return err
	}
	if err := s.store.SetOrganizationState(tx, orgID, models.OrgStateActive); err != nil {
		return err
	}
	return s.store.AppendBillingEvent(tx, &models.BillingEvent{OrganizationID: orgID,
		Kind: models.BillingBalanceRestored, BalanceMicroCents: st.BalanceMicroCents, BurnMicroCentsPerHour: b,
		At: s.clock().UTC()})
}

// MaxLowBalanceHours bounds a low-balance threshold (a year).
const MaxLowBalanceHours = 366 * 24

// MaxSpendLimitCents bounds a spend limit (a million dollars an hour).
const MaxSpendLimitCents = 100_000_000

// MayConfigure is the gate of the billing settings (the low-balance
// threshold, the spend limit): admin, its own organization's
// administrator, or nodes.admin, the operator's, for any. Which
// organization is Settings' and ChangeSettings' (another's answers as a
// missing one).
func (s *Service) MayConfigure(caller *auth.Caller) error {
	if caller.Can(auth.NodesAdmin) {
		return nil
	}
	return caller.Require(auth.Admin)
}

// mayConfigure checks that the caller may change organization orgID's
// settings: any with nodes.admin; its own with admin.
func (s *Service) mayConfigure(caller *auth.Caller, orgID string) error {
	if err := s.MayConfigure(caller); err != nil {
		return err
	}
	if !caller.Can(auth.NodesAdmin) && orgID != caller.OrganizationID {
		return apierr.NotFound(CodeOrganizationNotFound, "there is no organization %q", orgID)
	}
	return nil
}

// Settings is what an organization has set of its money's rules.
type Settings struct {
	OrganizationID string
	// LowBalanceThresholdHours: a runway below it raises low_balance;
	// nil: none.
	LowBalanceThresholdHours *int
	// SpendLimitCentsPerHour is its own limit (0: none); nil: the
	// platform's default applies (to a prepaid organization).
	SpendLimitCentsPerHour *int64
}

// SettingsChange is a change of an organization's settings: a setting is
// changed only when its Set… is true, to its value (nil clears it: no
// threshold; the platform's default spend limit).
type SettingsChange struct {
	SetLowBalance          bool
	LowBalanceHours        *int
	SetSpendLimit          bool
	SpendLimitCentsPerHour *int64
}

// Settings reads organization orgID's settings, for a caller who may read
// its money (MayRead) or change them.
func (s *Service) Settings(ctx context.Context, caller *auth.Caller, orgID string) (*Settings, error) {
	if s.mayConfigure(caller, orgID) != nil {
		if err := s.MayRead(caller, orgID); err != nil {
			return nil, err
		}
	}
	if err := s.known(ctx, orgID); err != nil {
		return nil, err
	}
	set, err := s.store.BillingSettings(ctx, orgID)
	if err != nil {
		return nil, err
	}
	return &Settings{OrganizationID: orgID, LowBalanceThresholdHours: set.LowBalanceHours,
		SpendLimitCentsPerHour: set.SpendLimitCentsPerHour}, nil
}

// ChangeSettings checks every setting of ch, then writes them in one
// statement (all or none) and answers the settings after it. A
// low-balance threshold is a whole number of hours from 1 to
// MaxLowBalanceHours: when the runway at the current burn rate falls
// below it, the metering pass raises one low_balance billing event (once
// per crossing; a threshold written re-arms it). A spend limit is a whole
// number of cents an hour from 1 to MaxSpendLimitCents, or 0 for none. An
// organization's own admin may tighten its limit, up to the platform's
// default, or clear it back to that default; lifting it past the default
// (or to none) is the operator's, as RunPod's support raises its $80/h.
func (s *Service) ChangeSettings(ctx context.Context, caller *auth.Caller, orgID string, ch SettingsChange) (*Settings, error) {
	if err := s.mayConfigure(caller, orgID); err != nil {
		return nil, err
	}
	if h := ch.LowBalanceHours; ch.SetLowBalance && h != nil && (*h < 1 || *h > MaxLowBalanceHours) {
		return nil, apierr.BadRequest("lowBalanceThresholdHours %d is not a whole number of hours from 1 to %d", *h, MaxLowBalanceHours)
	}
	if l := ch.SpendLimitCentsPerHour; ch.SetSpendLimit && l != nil {
		if *l < 0 || *l > MaxSpendLimitCents {
			return nil, apierr.BadRequest("spendLimitCentsPerHour %d is not a whole number of cents from 0 (none) to %d", *l, int64(MaxSpendLimitCents))
		}
		if !caller.Can(auth.NodesAdmin) {
			if *l == 0 {
				return nil, apierr.New(http.StatusForbidden, apierr.Forbidden,
					"spendLimitCentsPerHour 0 removes the limit, which only the platform operator (nodes.admin) does: an organization may tighten its own limit")
			}
			if s.SpendLimitCentsPerHour > 0 && *l > s.SpendLimitCentsPerHour {
				return nil, apierr.New(http.StatusForbidden, apierr.Forbidden,
					"spendLimitCentsPerHour %d is past the platform's default of %d cents per hour, which only the platform operator (nodes.admin) lifts: an organization may tighten its own limit",
					*l, s.SpendLimitCentsPerHour)
			}
		}
	}
	if err := s.known(ctx, orgID); err != nil {
		return nil, err
	}
	if err := s.store.ChangeBillingSettings(ctx, orgID, store.BillingSettingsChange{SetLowBalance: ch.SetLowBalance,
		LowBalanceHours: ch.LowBalanceHours, SetSpendLimit: ch.SetSpendLimit, SpendLimitCentsPerHour: ch.SpendLimitCentsPerHour}); err != nil {
		return nil, err
	}
	return s.Settings(ctx, caller, orgID)
}

// SetLowBalanceThreshold sets organization orgID's low-balance threshold
// in hours (nil removes it): ChangeSettings of that one setting.
func (s *Service) SetLowBalanceThreshold(ctx context.Context, caller *auth.Caller, orgID string, hours *int) (*Settings, error) {
	return s.ChangeSettings(ctx, caller, orgID, SettingsChange{SetLowBalance: true, LowBalanceHours: hours})
}

// SetSpendLimit sets organization orgID's own spend limit in cents per
// hour (0: none; nil: the platform's default again): ChangeSettings of
// that one setting.
func (s *Service) SetSpendLimit(ctx context.Context, caller *auth.Caller, orgID string, centsPerHour *int64) (*Settings, error) {
	return s.ChangeSettings(ctx, caller, orgID, SettingsChange{SetSpendLimit: true, SpendLimitCentsPerHour: centsPerHour})
}

// MaxBillingEventPage is the most billing events one read answers.
const MaxBillingEventPage = 500

// BillingEvents reads a page of organization orgID's billing events: at
// most limit after its event after (the organization's own numbering,
// models.BillingEvent.Seq), oldest first, and whether more follow.
func (s *Service) BillingEvents(ctx context.Context, caller *auth.Caller, orgID string, after int64, limit int) ([]models.BillingEvent, bool, error) {
	return readPage(ctx, s, caller, orgID, "a billing event", after, limit, MaxBillingEventPage, s.store.BillingEvents)
}

// SubscribeBillingEvents streams organization orgID's billing events
// through the process's live feed (every replica's, on PostgreSQL by
// NOTIFY), after its event after or from now when nil; the tenancy of
// every money read (MayRead), asked again whenever the feed rechecks the
// caller's credential. end is told why a stream ended that ctx did not end.
func (s *Service) SubscribeBillingEvents(ctx context.Context, caller *auth.Caller, orgID string, after *int64, end func(*apierr.Error)) (<-chan *models.BillingEvent, error) {
	may := func(c *auth.Caller) error { return s.MayRead(c, orgID) }
	if err := may(caller); err != nil {
		return nil, err
	}
	if s.Feed == nil {
		return nil, apierr.New(http.StatusServiceUnavailable, apierr.Unavailable, "this server streams no live updates")
	}
	if err := s.known(ctx, orgID); err != nil {
		return nil, err
	}
	return s.Feed.BillingEvents(ctx, caller, orgID, may, after, end)
}
