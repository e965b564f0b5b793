-- Run:ai project ids are small integers of each tenant's own ("7", "42"),
-- so two tenants may both have project 42: a project is keyed by its
-- tenant and its id. A workload names its project by id, so it carries
-- its tenant too (filled from its project, whose id was unique until
-- now), and its reference to the project is the pair. The tenant's reads
-- (its workloads, a workload of the tenant) read the workload's own
-- tenant_id instead of joining the projects.
ALTER TABLE workloads ADD COLUMN tenant_id integer;
UPDATE workloads SET tenant_id = p.tenant_id FROM projects p WHERE p.id = workloads.project_id;
ALTER TABLE workloads ALTER COLUMN tenant_id SET NOT NULL;
ALTER TABLE workloads DROP CONSTRAINT workloads_project_id_fkey;
ALTER TABLE projects DROP CONSTRAINT projects_pkey;
ALTER TABLE projects ADD PRIMARY KEY (tenant_id, id);
-- The key leads with tenant_id: it answers what 0001's index did.
DROP INDEX IF EXISTS projects_tenant;
ALTER TABLE workloads ADD FOREIGN KEY (tenant_id, project_id) REFERENCES projects (tenant_id, id);
DROP INDEX IF EXISTS workloads_project;
CREATE INDEX workloads_tenant_project ON workloads (tenant_id, project_id);
