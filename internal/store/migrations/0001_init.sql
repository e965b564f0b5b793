-- The whole model of the entities contract (docs/contract.md). Tokens are replaced per engine (store/migrate.go):
-- {{text}} is a string that compares in byte order on both engines,
-- {{time}} an instant, {{bool}} a boolean, {{float}} a double.

CREATE TABLE IF NOT EXISTS gpu_models (
  id            {{text}} PRIMARY KEY,
  name          {{text}} NOT NULL,
  manufacturer  {{text}} NOT NULL,
  memory_gb     integer  NOT NULL DEFAULT 0
);

CREATE TABLE IF NOT EXISTS fabrics (
  id           {{text}} PRIMARY KEY,
  ip_capacity  integer  NOT NULL
);

CREATE TABLE IF NOT EXISTS nodes (
  id                 {{text}} PRIMARY KEY,
  name               {{text}} NOT NULL,
  cluster_id         {{text}} NOT NULL DEFAULT '',
  node_pool          {{text}} NOT NULL DEFAULT '',
  status             {{text}} NOT NULL,
  agent_version      {{text}} NOT NULL DEFAULT '',
  fabric_id          {{text}} REFERENCES fabrics(id),
  cpu_cores          integer  NOT NULL DEFAULT 0,
  ram_gb             integer  NOT NULL DEFAULT 0,
  disk_gb            integer  NOT NULL DEFAULT 0,
  leaving_at         {{time}},
  last_heartbeat_at  {{time}}
);
CREATE UNIQUE INDEX IF NOT EXISTS nodes_name ON nodes (name);
CREATE INDEX IF NOT EXISTS nodes_cluster_name ON nodes (cluster_id, name);
CREATE INDEX IF NOT EXISTS nodes_fabric ON nodes (fabric_id);

CREATE TABLE IF NOT EXISTS organizations (
  id                  {{text}} PRIMARY KEY,
  name                {{text}} NOT NULL,
  tenant_id           integer  NOT NULL,
  infiniband_enabled  {{bool}} NOT NULL DEFAULT FALSE
);
CREATE INDEX IF NOT EXISTS organizations_tenant ON organizations (tenant_id);

CREATE TABLE IF NOT EXISTS api_keys (
  token_hash       {{text}} PRIMARY KEY,
  organization_id  {{text}} NOT NULL REFERENCES organizations(id),
  permissions      {{text}} NOT NULL,
  created_at       {{time}} NOT NULL
);

CREATE TABLE IF NOT EXISTS vms (
  id                   {{text}} PRIMARY KEY,
  name                 {{text}} NOT NULL,
  organization_id      {{text}} NOT NULL REFERENCES organizations(id),
  status               {{text}} NOT NULL,
  status_reason        {{text}} NOT NULL DEFAULT '',
  capability_tier      {{text}} NOT NULL DEFAULT '',
  compute_class        {{text}} NOT NULL DEFAULT '',
  created_at           {{time}},
  disk_size_gb         integer  NOT NULL DEFAULT 0,
  endpoint_url         {{text}} NOT NULL DEFAULT '',
  gpu_count            integer  NOT NULL DEFAULT 0,
  gpu_model_id         {{text}} REFERENCES gpu_models(id),
  image_url            {{text}} NOT NULL DEFAULT '',
  managed_by           {{text}} NOT NULL DEFAULT '',
  price_per_hour_cents integer  NOT NULL DEFAULT 0,
  provisioning_stage   {{text}} NOT NULL DEFAULT '',
  public               {{bool}} NOT NULL DEFAULT FALSE,
  resource_size        {{text}} NOT NULL DEFAULT '',
  service_type         {{text}} NOT NULL DEFAULT '',
  tier                 {{text}} NOT NULL DEFAULT '',
  volume_gb            integer  NOT NULL DEFAULT 0,
  node_id              {{text}} REFERENCES nodes(id),
  cpu_cores            integer  NOT NULL DEFAULT 0,
  ram_gb               integer  NOT NULL DEFAULT 0,
  tearing_down         {{bool}} NOT NULL DEFAULT FALSE,
  interrupted_at       {{time}},
  updated_at           {{time}}
);
CREATE INDEX IF NOT EXISTS vms_org_created ON vms (organization_id, created_at, id);
CREATE INDEX IF NOT EXISTS vms_node_status ON vms (node_id, status);
CREATE INDEX IF NOT EXISTS vms_status_interrupted ON vms (status, interrupted_at);

CREATE TABLE IF NOT EXISTS gpus (
  id                 {{text}} PRIMARY KEY,
  node_id            {{text}} NOT NULL REFERENCES nodes(id),
  idx                integer  NOT NULL,
  uuid               {{text}} NOT NULL DEFAULT '',
  address            {{text}} NOT NULL DEFAULT '',
  model_id           {{text}} NOT NULL REFERENCES gpu_models(id),
  health             {{text}} NOT NULL DEFAULT 'healthy',
  failed_reason      {{text}},
  holder_vm_id       {{text}} REFERENCES vms(id),
  utilization        integer,
  memory_used_bytes  bigint,
  sampled_at         {{time}}
);
CREATE UNIQUE INDEX IF NOT EXISTS gpus_node_idx ON gpus (node_id, idx);
CREATE UNIQUE INDEX IF NOT EXISTS gpus_uuid ON gpus (uuid) WHERE uuid <> '';
CREATE INDEX IF NOT EXISTS gpus_holder ON gpus (holder_vm_id);

CREATE TABLE IF NOT EXISTS projects (
  id         {{text}} PRIMARY KEY,
  name       {{text}} NOT NULL,
  tenant_id  integer  NOT NULL
);
CREATE INDEX IF NOT EXISTS projects_tenant ON projects (tenant_id);

CREATE TABLE IF NOT EXISTS workloads (
  id          {{text}} PRIMARY KEY,
  name        {{text}} NOT NULL,
  project_id  {{text}} NOT NULL REFERENCES projects(id),
  cluster_id  {{text}} NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS workloads_project ON workloads (project_id);

CREATE TABLE IF NOT EXISTS revisions (
  id           {{text}} PRIMARY KEY,
  workload_id  {{text}} NOT NULL REFERENCES workloads(id)
);
CREATE INDEX IF NOT EXISTS revisions_workload ON revisions (workload_id);

CREATE TABLE IF NOT EXISTS pods (
  id                    {{text}} PRIMARY KEY,
  tenant_id             integer  NOT NULL,
  name                  {{text}} NOT NULL,
  priority_class_name   {{text}} NOT NULL DEFAULT '',
  workload_id           {{text}} NOT NULL REFERENCES workloads(id),
  revision_id           {{text}} REFERENCES revisions(id),
  cluster_id            {{text}} NOT NULL DEFAULT '',
  project_id            {{text}},
  node_name             {{text}},
  created_at            {{time}} NOT NULL,
  completed_at          {{time}},
  containers            {{text}},
  current_node_pool     {{text}},
  requested_node_pools  {{text}},
  requested_resources   {{text}},
  allocated_resources   {{text}},
  tolerations           {{text}},
  k8s_phase             {{text}} NOT NULL DEFAULT '',
  ip                    {{text}},
  task                  {{text}},
  node_affinity         {{text}},
  k8s_phase_updated_at  {{time}} NOT NULL,
  updated_at            {{time}} NOT NULL,
  deleted_at            {{time}},
  project_name          {{text}},
  workload_name         {{text}}
);
CREATE INDEX IF NOT EXISTS pods_tenant_created ON pods (tenant_id, created_at, id);
CREATE INDEX IF NOT EXISTS pods_workload ON pods (workload_id);
CREATE INDEX IF NOT EXISTS pods_revision ON pods (revision_id);

CREATE TABLE IF NOT EXISTS metric_samples (
  pod_id  {{text}}  NOT NULL REFERENCES pods(id),
  type    {{text}}  NOT NULL,
  labels  {{text}}  NOT NULL DEFAULT '{}',
  ts      {{time}}  NOT NULL,
  value   {{float}} NOT NULL,
  PRIMARY KEY (pod_id, type, labels, ts)
);

CREATE TABLE IF NOT EXISTS histogram_samples (
  pod_id   {{text}} NOT NULL REFERENCES pods(id),
  type     {{text}} NOT NULL,
  ts       {{time}} NOT NULL,
  buckets  {{text}} NOT NULL,
  PRIMARY KEY (pod_id, type, ts)
);
