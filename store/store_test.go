package store_test

import (
	"context"
	"strings"
	"testing"

	"gpugraph/store"
	"gpugraph/store/storetest"
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
