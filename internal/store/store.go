// Package store opens gpugraph's database (PostgreSQL or embedded SQLite)
// from one code path, migrates it, and holds the queries every face shares.
//
// Instants are stored in UTC on both engines: SQLite keeps them as text, and
// text compares as instants only when every value has the same zone. Always
// hand the store time values in UTC (models.ParseTime and Now do).
//
// Reads scan with gorm's Find, never its Scan: Scan records each statement
// through a logger of its own that writes the SQL out with every value
// interpolated, whatever logger is configured (a tenth of a heartbeat's
// CPU). TestReadsFindNotScan keeps it so.
package store

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// Dialect names the engine behind a Store.
type Dialect string

const (
	Postgres Dialect = "postgres"
	SQLite   Dialect = "sqlite"
)

// DefaultSQLitePath is where `go run .` keeps its data when DATABASE_URL is unset.
const DefaultSQLitePath = "gpugraph.db"

// Store is the database and the engine it runs on.
type Store struct {
	DB      *gorm.DB
	Dialect Dialect

	url        string // for the event log's own LISTEN connection
	notifyOnce sync.Once
	notes      atomic.Pointer[Notifications] // set once; read by every commit
	// globalEventLock takes the one lock of every event log that came
	// before decision 0047 as well: only the benchmark that compares with
	// it sets it (export_test.go).
	globalEventLock bool
	// notifyInTx queues the VM event log's NOTIFY in the transaction, as
	// before noteAfterCommit: only the benchmark that compares sets it.
	notifyInTx bool
	late       lateNotes // the NOTIFYs sent after their commits
	health     healthConn
}

// Now is the store's clock: UTC, truncated to what both engines keep.
func Now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// IsPostgres reports whether rawURL names a PostgreSQL database.
func IsPostgres(rawURL string) bool {
	return strings.HasPrefix(rawURL, "postgres://") || strings.HasPrefix(rawURL, "postgresql://")
}

// Open connects to the database named by rawURL: "postgres://…" or
// "postgresql://…" for PostgreSQL, "" or "sqlite:PATH" for SQLite.
func Open(rawURL string) (*Store, error) {
	cfg := &gorm.Config{
		Logger:                 logger.Discard,
		NowFunc:                Now,
		SkipDefaultTransaction: true,
		PrepareStmt:            false,
	}
	switch {
	case IsPostgres(rawURL):
		db, err := gorm.Open(postgres.Open(rawURL), cfg)
		if err != nil {
			return nil, fmt.Errorf("open PostgreSQL: %w", redactErr(err, rawURL))
		}
		sqlDB, err := db.DB()
		if err != nil {
			return nil, err
		}
		sqlDB.SetMaxOpenConns(32)
		sqlDB.SetMaxIdleConns(16)
		sqlDB.SetConnMaxIdleTime(5 * time.Minute)
		if err := keepPodSearchText(db); err != nil {
			return nil, err
		}
		return &Store{DB: db, Dialect: Postgres, url: rawURL}, nil
	case rawURL == "", strings.HasPrefix(rawURL, "sqlite:"):
		path := strings.TrimPrefix(rawURL, "sqlite:")
		path = strings.TrimPrefix(path, "//")
		if path == "" {
			path = DefaultSQLitePath
		}
		db, err := gorm.Open(sqlite.Open(sqliteDSN(path)), cfg)
		if err != nil {
			return nil, fmt.Errorf("open SQLite %s: %w", path, err)
		}
		sqlDB, err := db.DB()
		if err != nil {
			return nil, err
		}
		// One writer at a time is SQLite's nature; a small pool of readers
		// is what WAL mode allows beside it.
		sqlDB.SetMaxOpenConns(8)
		if err := keepPodSearchText(db); err != nil {
			return nil, err
		}
		return &Store{DB: db, Dialect: SQLite}, nil
	default:
		return nil, fmt.Errorf("DATABASE_URL %q: want postgres://…, postgresql://… or sqlite:PATH", redact(rawURL))
	}
}

// sqliteDSN turns on what gpugraph relies on: foreign keys, WAL, a busy
// timeout, BEGIN IMMEDIATE for every transaction (SQLite has no row locks,
// so a transaction that reads "free" must already hold the write lock), and
// case-sensitive LIKE as on PostgreSQL.
func sqliteDSN(path string) string {
	q := url.Values{}
	q.Set("_foreign_keys", "on")
	q.Set("_journal_mode", "WAL")
	q.Set("_busy_timeout", "10000")
	q.Set("_txlock", "immediate")
	q.Set("_case_sensitive_like", "on")
	q.Set("_synchronous", "NORMAL")
	return "file:" + path + "?" + q.Encode()
}

// Analyze refreshes the planner's statistics of every table.
func (s *Store) Analyze(ctx context.Context) error {
	return s.WithContext(ctx).Exec("ANALYZE").Error
}

// RefreshPodStatistics gives SQLite's planner statistics of the pods
// table after a write of many pods (a cluster's snapshot): SQLite gathers
// none by itself, and without them a Pods read at 30,000 pods took 26 ms
// instead of 1.2 ms (BENCHMARKS.md, figure 10). ANALYZE samples about 1,000 rows per index
// (analysis_limit), so it holds the one writer for milliseconds, not for a
// scan of every index. PostgreSQL's autovacuum analyzes on its own: a no-op.
func (s *Store) RefreshPodStatistics(ctx context.Context) error {
	if s.Dialect != SQLite {
		return nil
	}
	return s.conn(ctx, func(db *gorm.DB) error {
		// The limit is the connection's; the pool's next user gets it back.
		defer db.Exec("PRAGMA analysis_limit = 0")
		if err := db.Exec("PRAGMA analysis_limit = 1000").Error; err != nil {
			return err
		}
		return db.Exec("ANALYZE pods").Error
	})
}

// Close releases the connection pool.
func (s *Store) Close() error {
	s.closeHealth()
	s.late.done.Wait() // what was committed is notified before the pool closes
	if n := s.notes.Load(); n != nil {
		n.close()
	}
	sqlDB, err := s.DB.DB()
	if err != nil {
		return err
	}
	return sqlDB.Close()
}

// Ping answers whether the database answers.
func (s *Store) Ping(ctx context.Context) error {
	sqlDB, err := s.DB.DB()
	if err != nil {
		return err
	}
	return sqlDB.PingContext(ctx)
}

// WithContext is the database for one request.
func (s *Store) WithContext(ctx context.Context) *gorm.DB { return s.DB.WithContext(ctx) }

func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

func redactErr(err error, raw string) error {
	u, perr := url.Parse(raw)
	if perr != nil || u.User == nil {
		return err
	}
	if pw, has := u.User.Password(); has && pw != "" {
		return errors.New(strings.ReplaceAll(err.Error(), pw, "xxxxx"))
	}
	return err
}

// The batch reads behind the dataloaders (NodesByIDs, GPUsByHolders,
// VMsByIDs, …, beside the rows they read) run one statement each, whatever
// the number of keys. Rows come back in no particular order; loaders put
// them in key order. Every read of a VM is scoped to an organization, every
// read of a workload or project to a tenant: there is no unscoped variant
// to misuse.

// Empty reports whether the database holds no organization and no node yet.
func (s *Store) Empty(ctx context.Context) (bool, error) {
	var n int64
	if err := s.WithContext(ctx).Raw("SELECT (SELECT COUNT(*) FROM organizations) + (SELECT COUNT(*) FROM nodes)").Find(&n).Error; err != nil {
		return false, err
	}
	return n == 0, nil
}
