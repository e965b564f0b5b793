package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

func TestMigrateTwice(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		want, err := st.MigrationFiles()
		if err != nil || len(want) < 2 {
			t.Fatalf("migration files %v, %v", want, err)
		}
		if err := st.Migrate(context.Background()); err != nil {
			t.Fatalf("second migrate: %v", err)
		}
		var got []string
		if err := st.DB.Raw("SELECT version FROM schema_migrations ORDER BY version").Scan(&got).Error; err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("applied %v, want each of %v once", got, want)
		}
	})
}

func TestByteOrderCollation(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		for _, id := range []string{"b", "B", "a", "é", "Z"} {
			if err := st.DB.Exec("INSERT INTO fabrics (id, ip_capacity) VALUES (?, 1)", id).Error; err != nil {
				t.Fatal(err)
			}
		}
		var got []string
		if err := st.DB.Raw("SELECT id FROM fabrics ORDER BY id").Scan(&got).Error; err != nil {
			t.Fatal(err)
		}
		want := []string{"B", "Z", "a", "b", "é"}
		if len(got) != len(want) {
			t.Fatalf("got %v", got)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("order = %v, want %v", got, want)
			}
		}
	})
}

func TestOpenRejectsUnknownURL(t *testing.T) {
	_, err := store.Open("mysql://x")
	if err == nil || err.Error() != `DATABASE_URL "mysql://x": want postgres://…, postgresql://… or sqlite:PATH` {
		t.Fatalf("err = %v", err)
	}
}

// A database where two organizations share a Run:ai tenant (made before
// tenants were unique) is refused at the migration that makes them
// unique, naming the organizations, and keeps its data; fixed, it migrates.
func TestMigrateRefusesSharedTenants(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		db := st.DB
		for _, stmt := range []string{
			"DROP INDEX organizations_tenant_unique",
			"DELETE FROM schema_migrations WHERE version = '0011_organizations_tenant.sql'",
			"INSERT INTO organizations (id, name, tenant_id, infiniband_enabled) VALUES ('org-a', 'A', 7, false), ('org-b', 'B', 7, false), ('org-c', 'C', 7, false), ('org-d', 'D', 8, false), ('org-e', 'E', 8, false), ('org-f', 'F', 9, false)",
		} {
			if err := db.Exec(stmt).Error; err != nil {
				t.Fatal(err)
			}
		}
		err := st.Migrate(context.Background())
		const want = "migrate: 0011_organizations_tenant.sql: organizations share a Run:ai tenant (tenant 7: org-a, org-b, org-c; tenant 8: org-d, org-e): each tenant's pods are read by one organization's keys, so give all but one of them their own tenant id, then start again"
		if err == nil || err.Error() != want {
			t.Fatalf("got %v\nwant %s", err, want)
		}
		for tenant, id := range map[int]string{11: "org-b", 12: "org-c", 13: "org-e"} {
			if err := db.Exec("UPDATE organizations SET tenant_id = ? WHERE id = ?", tenant, id).Error; err != nil {
				t.Fatal(err)
			}
		}
		if err := st.Migrate(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := db.Exec("INSERT INTO organizations (id, name, tenant_id, infiniband_enabled) VALUES ('org-g', 'G', 9, false)").Error; !store.IsUniqueViolation(err) {
			t.Fatalf("a second organization of tenant 9: %v", err)
		}
	})
}

// Upgrading a database whose log holds events (ids drawn from one global
// sequence, some purged): migration 0011_vm_events_seq keeps each kept
// event's id as its seq and starts every organization's counter at the
// last id ever drawn, so ids a client holds from before still resume.
func TestMigrateKeepsEventIDs(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		db := st.DB
		name := "0011_vm_events_seq." + string(st.Dialect) + ".sql"
		for _, stmt := range []string{
			"DROP INDEX vm_events_org_seq",
			"ALTER TABLE vm_events DROP COLUMN seq",
			"DROP TABLE vm_event_seqs",
			"CREATE INDEX vm_events_org ON vm_events (organization_id, id)",
			"DELETE FROM schema_migrations WHERE version = '" + name + "'",
			"INSERT INTO organizations (id, name, tenant_id, infiniband_enabled) VALUES ('org-a', 'A', 1, false), ('org-b', 'B', 2, false)",
		} {
			if err := db.Exec(stmt).Error; err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
		}
		// Ids 1–5 drawn; 1, 2 and the last, 5, purged since.
		for i, org := range []string{"org-a", "org-b", "org-a", "org-b", "org-a"} {
			if err := db.Exec(`INSERT INTO vm_events (vm_id, organization_id, from_status, to_status, transition, actor_kind, at)
				VALUES ('v', ?, 'running', 'stopped', 'user-stop', 'user', ?)`, org, store.Now().Add(time.Duration(i)*time.Second)).Error; err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Exec("DELETE FROM vm_events WHERE id <= 2 OR id = 5").Error; err != nil {
			t.Fatal(err)
		}
		if err := st.Migrate(context.Background()); err != nil {
			t.Fatal(err)
		}
		var kept []struct {
			ID, Seq        int64
			OrganizationID string
		}
		db.Raw("SELECT id, seq, organization_id FROM vm_events ORDER BY id").Scan(&kept)
		if fmt.Sprint(kept) != "[{3 3 org-a} {4 4 org-b}]" {
			t.Errorf("kept events %v", kept)
		}
		var counters []struct {
			OrganizationID string
			Last           int64
		}
		db.Raw("SELECT organization_id, last FROM vm_event_seqs ORDER BY organization_id").Scan(&counters)
		if fmt.Sprint(counters) != "[{org-a 5} {org-b 5}]" {
			t.Errorf("counters %v, want every organization at 5, the last id drawn", counters)
		}
	})
}

// Upgrading a database to projects keyed by tenant and id (migration
// 0020_project_tenant_key): every workload takes its project's tenant, the
// pods and revisions that name the workloads keep them, and afterwards two
// tenants may both have project 42 while a workload's project must be one
// of its own tenant's.
func TestMigrateKeysProjectsByTenant(t *testing.T) {
	for _, d := range storetest.Engines() {
		t.Run(string(d), func(t *testing.T) {
			st, err := store.Open(storetest.URL(t, d))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = st.Close() })
			ctx := context.Background()
			if err := st.MigrateBefore(ctx, "0020"); err != nil {
				t.Fatal(err)
			}
			db := st.DB
			at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			for _, stmt := range []string{
				"INSERT INTO projects (id, name, tenant_id) VALUES ('42', 'alpha', 7), ('43', 'beta', 8)",
				"INSERT INTO workloads (id, name, project_id, cluster_id) VALUES ('w1', 'train', '42', 'c1'), ('w2', 'serve', '43', 'c2')",
				"INSERT INTO revisions (id, workload_id) VALUES ('r1', 'w2')",
			} {
				if err := db.Exec(stmt).Error; err != nil {
					t.Fatalf("%s: %v", stmt, err)
				}
			}
			if err := db.Exec(`INSERT INTO pods (id, tenant_id, name, workload_id, revision_id, project_id, created_at, k8s_phase_updated_at, updated_at)
				VALUES ('p1', 7, 'a', 'w1', NULL, '42', ?, ?, ?), ('p2', 8, 'b', 'w2', 'r1', '43', ?, ?, ?)`, at, at, at, at, at, at).Error; err != nil {
				t.Fatal(err)
			}
			if err := st.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			var workloads []struct {
				ID, ProjectID string
				TenantID      int
			}
			db.Raw("SELECT id, project_id, tenant_id FROM workloads ORDER BY id").Scan(&workloads)
			if fmt.Sprint(workloads) != "[{w1 42 7} {w2 43 8}]" {
				t.Errorf("workloads %v, want each with its project's tenant", workloads)
			}
			var kept []string
			db.Raw("SELECT p.id || ' ' || p.workload_id || ' ' || COALESCE(r.id, '-') FROM pods p LEFT JOIN revisions r ON r.id = p.revision_id ORDER BY p.id").Scan(&kept)
			if fmt.Sprint(kept) != "[p1 w1 - p2 w2 r1]" {
				t.Errorf("pods and revisions %v", kept)
			}
			for tenant, want := range map[int]bool{7: true, 8: false} {
				if has, err := st.TenantHasWorkload(ctx, tenant, "w1"); err != nil || has != want {
					t.Errorf("tenant %d has workload w1: %v (%v), want %v", tenant, has, err, want)
				}
			}
			if err := db.Exec("INSERT INTO projects (id, name, tenant_id) VALUES ('42', 'gamma', 8)").Error; err != nil {
				t.Errorf("tenant 8's own project 42: %v", err)
			}
			if err := db.Exec("INSERT INTO projects (id, name, tenant_id) VALUES ('42', 'again', 7)").Error; !store.IsUniqueViolation(err) {
				t.Errorf("tenant 7's project 42 a second time: %v, want a unique violation", err)
			}
			if err := db.Exec("INSERT INTO workloads (id, name, project_id, cluster_id, tenant_id) VALUES ('w3', 'x', '42', 'c3', 9)").Error; err == nil {
				t.Errorf("a workload of tenant 9 in project 42, which tenant 9 does not have, was written")
			}
			if d == store.SQLite {
				var broken []map[string]any
				if err := db.Raw("PRAGMA foreign_key_check").Scan(&broken).Error; err != nil || len(broken) != 0 {
					t.Errorf("foreign key check: %v (%v)", broken, err)
				}
			}
		})
	}
}

// Upgrading a database to per-organization billing event ids (migration
// 0024_billing_event_seq): the events kept are numbered 1, 2 … within each
// organization in id order, the next append takes the one after, and a
// second event of one number in one organization is refused.
func TestMigrateNumbersBillingEventsPerOrganization(t *testing.T) {
	for _, d := range storetest.Engines() {
		t.Run(string(d), func(t *testing.T) {
			st, err := store.Open(storetest.URL(t, d))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = st.Close() })
			ctx := context.Background()
			if err := st.MigrateBefore(ctx, "0024"); err != nil {
				t.Fatal(err)
			}
			db := st.DB
			at := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
			if err := db.Exec("INSERT INTO organizations (id, name, tenant_id) VALUES ('org-a', 'A', 1), ('org-b', 'B', 2)").Error; err != nil {
				t.Fatal(err)
			}
			for _, org := range []string{"org-a", "org-b", "org-a", "org-a", "org-b"} {
				if err := db.Exec(`INSERT INTO billing_events (organization_id, kind, balance_micro_cents, burn_micro_cents_per_hour, at)
					VALUES (?, 'low_balance', 0, 0, ?)`, org, at).Error; err != nil {
					t.Fatal(err)
				}
			}
			if err := st.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			var seqs []string
			db.Raw("SELECT organization_id || ':' || CAST(seq AS TEXT) FROM billing_events ORDER BY id").Scan(&seqs)
			if fmt.Sprint(seqs) != "[org-a:1 org-b:1 org-a:2 org-a:3 org-b:2]" {
				t.Errorf("seqs %v, want each organization's counted in id order", seqs)
			}
			e := &models.BillingEvent{OrganizationID: "org-b", Kind: models.BillingLowBalance, At: at}
			if err := st.InTx(ctx, func(tx *store.Txn) error { return st.AppendBillingEvent(tx, e) }); err != nil || e.Seq != 3 {
				t.Errorf("the next of org-b: seq %d (%v), want 3", e.Seq, err)
			}
			if err := db.Exec(`INSERT INTO billing_events (organization_id, seq, kind, balance_micro_cents, burn_micro_cents_per_hour, at)
				VALUES ('org-a', 2, 'low_balance', 0, 0, ?)`, at).Error; !store.IsUniqueViolation(err) {
				t.Errorf("org-a's seq 2 a second time: %v, want a unique violation", err)
			}
		})
	}
}
