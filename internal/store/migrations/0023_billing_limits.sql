-- What an organization's money allows (docs/decisions/0042-metering.md):
-- its own spend limit in cents per hour (NULL: the platform's default,
-- --spend-limit-cents-per-hour), its low-balance threshold as a runway in
-- hours (NULL: none), and whether its runway is below that threshold now,
-- so the metering pass raises the low-balance event once per crossing.
CREATE TABLE IF NOT EXISTS billing_settings (
  organization_id             {{text}} PRIMARY KEY REFERENCES organizations(id),
  spend_limit_cents_per_hour  bigint CHECK (spend_limit_cents_per_hour >= 0),
  low_balance_hours           integer CHECK (low_balance_hours > 0),
  below_low_balance           {{bool}} NOT NULL DEFAULT false
);

-- The organizations' billing events, which the metering pass appends:
-- low_balance (the runway crossed below the threshold), balance_exhausted
-- (the balance no longer covered the next period: what ran was stopped)
-- and balance_restored (a credit made the organization active again).
CREATE TABLE IF NOT EXISTS billing_events (
  id                          {{serial}},
  organization_id             {{text}} NOT NULL REFERENCES organizations(id),
  kind                        {{text}} NOT NULL,
  balance_micro_cents         bigint NOT NULL,
  burn_micro_cents_per_hour   bigint NOT NULL,
  threshold_hours             integer,
  stopped                     integer NOT NULL DEFAULT 0,
  at                          {{time}} NOT NULL
);
CREATE INDEX IF NOT EXISTS billing_events_org ON billing_events (organization_id, id);
