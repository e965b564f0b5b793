package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	"gpugraph/internal/store"
)

// DB is a fresh, migrated database that Drop removes again.
type DB struct {
	*store.Store
	// URL is the database's address (a PostgreSQL URL or sqlite:PATH), for
	// a server of another process to open.
	URL  string
	drop func()
}

// Drop closes the database and removes it.
func (d *DB) Drop() {
	_ = d.Close()
	d.drop()
}

// FreshDB makes an empty, migrated database on engine: SQLite in a new
// temporary directory, or PostgreSQL as a new database on the server of
// pgURL (which must be able to CREATE DATABASE).
func FreshDB(ctx context.Context, engine store.Dialect, pgURL string) (*DB, error) {
	raw, drop, err := freshURL(engine, pgURL)
	if err != nil {
		return nil, err
	}
	st, err := store.Open(raw)
	if err != nil {
		drop()
		return nil, err
	}
	if err := st.Migrate(ctx); err != nil {
		_ = st.Close()
		drop()
		return nil, fmt.Errorf("migrate %s: %w", engine, err)
	}
	return &DB{Store: st, URL: raw, drop: drop}, nil
}

func freshURL(engine store.Dialect, pgURL string) (string, func(), error) {
	if engine == store.SQLite {
		dir, err := os.MkdirTemp("", "gpugraph-bench-")
		if err != nil {
			return "", nil, err
		}
		return "sqlite:" + filepath.Join(dir, "bench.db"), func() { _ = os.RemoveAll(dir) }, nil
	}
	admin, err := store.Open(pgURL)
	if err != nil {
		return "", nil, err
	}
	defer admin.Close()
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		return "", nil, err
	}
	// The name is made here from hex digits only, never from input.
	name := "gpugraph_bench_" + hex.EncodeToString(b)
	if err := admin.DB.Exec(`CREATE DATABASE ` + name).Error; err != nil {
		return "", nil, fmt.Errorf("create database: %w", err)
	}
	drop := func() {
		if admin, err := store.Open(pgURL); err == nil {
			admin.DB.Exec(`DROP DATABASE IF EXISTS ` + name + ` WITH (FORCE)`)
			_ = admin.Close()
		}
	}
	u, err := url.Parse(pgURL)
	if err != nil {
		drop()
		return "", nil, err
	}
	u.Path = "/" + name
	return u.String(), drop, nil
}

// WithApplicationName sets the application_name a PostgreSQL URL's
// connections carry, so a server's backends can be found in
// pg_stat_activity (Backends). Any other URL is answered as it is.
func WithApplicationName(raw, app string) string {
	if !store.IsPostgres(raw) {
		return raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	q := u.Query()
	q.Set("application_name", app)
	u.RawQuery = q.Encode()
	return u.String()
}

// Backends are the process ids of the PostgreSQL backends serving
// connections named app (WithApplicationName); none on SQLite or
// without a database.
func Backends(ctx context.Context, db *DB, app string) []int {
	if db == nil || db.Dialect != store.Postgres {
		return nil
	}
	var pids []int
	db.WithContext(ctx).Raw("SELECT pid FROM pg_stat_activity WHERE application_name = ?", app).Scan(&pids)
	return pids
}

// TerminateBackends ends the PostgreSQL backends of connections named app:
// a statement a killed client left running stops there.
func TerminateBackends(ctx context.Context, db *DB, app string) {
	if db == nil || db.Dialect != store.Postgres {
		return
	}
	var ended []bool
	db.WithContext(ctx).Raw("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = ?", app).Scan(&ended)
}
