-- Metering (docs/decisions/0042-metering.md). What a transition leaves
-- to be billed, on its event: the row's pricePerHourCents after it (NULL on
-- events written before this; the pass reads the row's then) and the GB of
-- the disk or /workspace volume it keeps where its status after it is
-- stopped (the one status that accrues storage; 0 otherwise).
ALTER TABLE vm_events ADD COLUMN price_per_hour_cents integer;
ALTER TABLE vm_events ADD COLUMN storage_gb integer NOT NULL DEFAULT 0;

-- The catalog's storage price: micro-cents (1e-6 cent) per GB-hour of a
-- kept disk or volume of a stopped workload. 27,400 µ¢ is $0.20 per GB per
-- month of 730 hours, RunPod's price of a stopped pod's volume.
CREATE TABLE IF NOT EXISTS storage_prices (
  kind                     {{text}} PRIMARY KEY,
  micro_cents_per_gb_hour  bigint NOT NULL CHECK (micro_cents_per_gb_hour >= 0)
);
INSERT INTO storage_prices (kind, micro_cents_per_gb_hour) VALUES ('volume', 27400) ON CONFLICT (kind) DO NOTHING;

-- Each workload's metering cursor: usage is closed up to through, the
-- events up to last_event_id are applied, and the state they left (status,
-- price, storage kept) is here, so a pass never reads an event before it
-- (retention may have deleted them). The carries are the remainders below
-- one micro-cent of the exact cost so far, in µ¢/3,600,000 (see
-- usage_records). done: terminated, nothing more accrues.
CREATE TABLE IF NOT EXISTS usage_cursors (
  vm_id                 {{text}} PRIMARY KEY,
  organization_id       {{text}} NOT NULL,
  through               {{time}} NOT NULL,
  last_event_id         bigint NOT NULL,
  status                {{text}} NOT NULL,
  price_per_hour_cents  integer NOT NULL,
  storage_gb            integer NOT NULL,
  compute_carry         bigint NOT NULL DEFAULT 0,
  storage_carry         bigint NOT NULL DEFAULT 0,
  done                  {{bool}} NOT NULL DEFAULT false
);
CREATE INDEX IF NOT EXISTS usage_cursors_open ON usage_cursors (done, vm_id);

-- Closed usage: one record per workload, kind (compute, storage) and
-- period, the period starting where the workload's cursor stood, so the
-- same second can never be recorded twice (the unique key). A period never
-- crosses a UTC hour, so day and hour windows read whole records.
CREATE TABLE IF NOT EXISTS usage_records (
  id                {{serial}},
  organization_id   {{text}} NOT NULL,
  vm_id             {{text}} NOT NULL,
  kind              {{text}} NOT NULL,
  period_start      {{time}} NOT NULL,
  period_end        {{time}} NOT NULL,
  day               {{text}} NOT NULL,
  gpu_model_id      {{text}},
  gpu_count         integer NOT NULL,
  storage_gb        integer NOT NULL,
  milliseconds      bigint NOT NULL,
  gpu_milliseconds  bigint NOT NULL,
  cost_micro_cents  bigint NOT NULL,
  closed_at         {{time}} NOT NULL,
  UNIQUE (vm_id, kind, period_start)
);
CREATE INDEX IF NOT EXISTS usage_records_org ON usage_records (organization_id, period_start);

-- Each organization's ledger, append-only: credits an operator grants,
-- usage debits of the metering pass (prepaid organizations only), and
-- adjustments; the balance is its sum. An organization with no credit is
-- postpaid. The idempotency key is unique per organization.
CREATE TABLE IF NOT EXISTS ledger_entries (
  id                  {{serial}},
  organization_id     {{text}} NOT NULL REFERENCES organizations(id),
  kind                {{text}} NOT NULL,
  amount_micro_cents  bigint NOT NULL,
  reason              {{text}} NOT NULL,
  idempotency_key     {{text}} NOT NULL,
  created_at          {{time}} NOT NULL,
  UNIQUE (organization_id, idempotency_key)
);
CREATE INDEX IF NOT EXISTS ledger_entries_org ON ledger_entries (organization_id, id);
