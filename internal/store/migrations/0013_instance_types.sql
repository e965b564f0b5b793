-- The instance types a user creates VMs and pods from (GPU model × count,
-- the CPU, RAM and disk that go with them, the price): loaded with the data
-- set and kept by an operator. A CPU-only type has no GPU model.
CREATE TABLE IF NOT EXISTS instance_types (
  name                  {{text}} PRIMARY KEY,
  gpu_model_id          {{text}} REFERENCES gpu_models(id),
  gpu_count             integer  NOT NULL DEFAULT 0 CHECK (gpu_count >= 0),
  cpu_cores             integer  NOT NULL DEFAULT 0 CHECK (cpu_cores >= 0),
  ram_gb                integer  NOT NULL DEFAULT 0 CHECK (ram_gb >= 0),
  disk_size_gb          integer  NOT NULL DEFAULT 0 CHECK (disk_size_gb >= 0),
  volume_gb             integer  NOT NULL DEFAULT 0 CHECK (volume_gb >= 0),
  price_per_hour_cents  integer  NOT NULL DEFAULT 0 CHECK (price_per_hour_cents >= 0),
  description           {{text}} NOT NULL DEFAULT ''
);
