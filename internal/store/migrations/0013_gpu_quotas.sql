-- An organization's GPU quota per model, set by an operator: the most GPUs
-- of that model its VMs and pods may hold or wait for at once. No row is
-- no limit. A check that places a VM locks the row (FOR UPDATE) before it
-- counts, so two placements of one organization never both fit the last
-- GPUs of its quota.
CREATE TABLE IF NOT EXISTS gpu_quotas (
  organization_id  {{text}} NOT NULL REFERENCES organizations(id),
  gpu_model_id     {{text}} NOT NULL REFERENCES gpu_models(id),
  gpu_limit        integer  NOT NULL CHECK (gpu_limit >= 0),
  updated_at       {{time}} NOT NULL,
  PRIMARY KEY (organization_id, gpu_model_id)
);

-- The quota check sums the GPUs an organization's VMs of one model hold or
-- await, inside the placing transaction: an index range, not a scan of the
-- organization's rows.
CREATE INDEX IF NOT EXISTS vms_org_model_status ON vms (organization_id, gpu_model_id, status);
