-- Run:ai project ids are small integers of each tenant's own ("7", "42"),
-- so two tenants may both have project 42: a project is keyed by its
-- tenant and its id, and a workload carries its tenant (filled from its
-- project, whose id was unique until now) and names its project by the
-- pair; see 0020_project_tenant_key.postgres.sql.
--
-- SQLite changes no primary key or foreign key in place: both tables are
-- made anew and the old ones dropped. The migration runs in a transaction,
-- where foreign_keys cannot be turned off, so the checks are deferred to
-- the commit instead: dropping the old workloads leaves the pods and
-- revisions that name them without a parent for a moment (counted, not
-- refused), and the rows written back into the new table, under the old
-- name, give each its parent again before the commit checks the count.
PRAGMA defer_foreign_keys = ON;
CREATE TABLE projects_new (
  id         {{text}} NOT NULL,
  name       {{text}} NOT NULL,
  tenant_id  integer  NOT NULL,
  PRIMARY KEY (tenant_id, id)
);
INSERT INTO projects_new (id, name, tenant_id) SELECT id, name, tenant_id FROM projects;
CREATE TABLE workloads_new (
  id          {{text}} PRIMARY KEY,
  name        {{text}} NOT NULL,
  project_id  {{text}} NOT NULL,
  cluster_id  {{text}} NOT NULL DEFAULT '',
  tenant_id   integer  NOT NULL,
  FOREIGN KEY (tenant_id, project_id) REFERENCES projects_new (tenant_id, id)
);
CREATE TABLE workloads_kept AS
  SELECT w.id, w.name, w.project_id, w.cluster_id, p.tenant_id FROM workloads w JOIN projects p ON p.id = w.project_id;
DROP TABLE workloads;
DROP TABLE projects;
-- Renaming projects_new rewrites workloads_new's reference to it.
ALTER TABLE projects_new RENAME TO projects;
ALTER TABLE workloads_new RENAME TO workloads;
INSERT INTO workloads (id, name, project_id, cluster_id, tenant_id)
  SELECT id, name, project_id, cluster_id, tenant_id FROM workloads_kept;
DROP TABLE workloads_kept;
CREATE INDEX workloads_tenant_project ON workloads (tenant_id, project_id);
