// Package storetest gives tests a fresh, migrated database on each engine:
// SQLite always, and PostgreSQL when TEST_DATABASE_URL is set. Each call
// makes its own database, so tests and packages never see each other's rows.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"gorm.io/gorm/logger"

	"gpugraph/internal/store"
)

// Engines lists the engines the suite runs on in this environment.
func Engines() []store.Dialect {
	if os.Getenv("TEST_DATABASE_URL") != "" {
		return []store.Dialect{store.SQLite, store.Postgres}
	}
	return []store.Dialect{store.SQLite}
}

// Each runs fn as a subtest on every engine, each with a fresh database.
func Each(t *testing.T, fn func(t *testing.T, st *store.Store)) {
	t.Helper()
	for _, d := range Engines() {
		t.Run(string(d), func(t *testing.T) {
			fn(t, Open(t, d))
		})
	}
}

// Open makes a fresh, migrated database on engine d, dropped when t ends.
func Open(t testing.TB, d store.Dialect) *store.Store {
	t.Helper()
	raw := URL(t, d)
	st, err := store.Open(raw)
	if err != nil {
		t.Fatalf("open %s: %v", d, err)
	}
	if os.Getenv("TEST_SQL_LOG") != "" {
		st.DB.Logger = logger.Default.LogMode(logger.Info)
	}
	t.Cleanup(func() { _ = st.Close() })
	if err := st.Migrate(context.Background()); err != nil {
		t.Fatalf("migrate %s: %v", d, err)
	}
	return st
}

// URL makes a fresh empty database on engine d and answers its DATABASE_URL.
func URL(t testing.TB, d store.Dialect) string {
	t.Helper()
	if d == store.SQLite {
		return "sqlite:" + filepath.Join(t.TempDir(), "test.db")
	}
	base := os.Getenv("TEST_DATABASE_URL")
	if base == "" {
		t.Skip("TEST_DATABASE_URL is not set")
	}
	admin, err := store.Open(base)
	if err != nil {
		t.Fatalf("open TEST_DATABASE_URL: %v", err)
	}
	defer admin.Close()
	name := "gpugraph_t_" + randomSuffix()
	if err := admin.DB.Exec(`CREATE DATABASE ` + name).Error; err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		admin, err := store.Open(base)
		if err != nil {
			return
		}
		defer admin.Close()
		admin.DB.Exec(`DROP DATABASE IF EXISTS ` + name + ` WITH (FORCE)`)
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parse TEST_DATABASE_URL: %v", err)
	}
	u.Path = "/" + name
	return u.String()
}

func randomSuffix() string {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprint("random: ", err))
	}
	return hex.EncodeToString(b)
}

// Replicas opens n stores on one fresh, migrated database of engine d, each
// with its own connection pool (and, on PostgreSQL, its own listener): the
// servers of a several-replica test.
func Replicas(t testing.TB, d store.Dialect, n int) []*store.Store {
	t.Helper()
	raw := URL(t, d)
	out := make([]*store.Store, n)
	for i := range out {
		st, err := store.Open(raw)
		if err != nil {
			t.Fatalf("open %s: %v", d, err)
		}
		t.Cleanup(func() { _ = st.Close() })
		out[i] = st
	}
	if err := out[0].Migrate(context.Background()); err != nil {
		t.Fatalf("migrate %s: %v", d, err)
	}
	return out
}
