-- A Run:ai tenant belongs to one organization: its keys read that tenant's
-- pods, so a second organization given the same tenant id would read
-- another's pods. The unique index replaces 0001's plain one (same
-- column, so reads keep their index). Migrate refuses, naming them, a
-- database where two organizations share one (duplicateTenants), rather
-- than failing here with only the index's name.
DROP INDEX IF EXISTS organizations_tenant;
CREATE UNIQUE INDEX organizations_tenant_unique ON organizations (tenant_id);
