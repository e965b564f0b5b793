package store

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/mattn/go-sqlite3"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// maxAttempts bounds how often a transaction that lost a race is replayed.
const maxAttempts = 10

// tx runs fn in one transaction and replays it when the engine says it lost
// a race (serialization failure or deadlock on PostgreSQL, busy on SQLite).
// fn must therefore be safe to run again: read, decide and write inside it.
func (s *Store) tx(ctx context.Context, fn func(tx *gorm.DB) error) error {
	var err error
	for attempt := 1; ; attempt++ {
		var noted Topic
		t := &tail{}
		tctx := context.WithValue(context.WithValue(ctx, notedKey{}, &noted), tailKey{}, t)
		err = s.DB.WithContext(tctx).Transaction(func(db *gorm.DB) error {
			if err := fn(db); err != nil {
				return err
			}
			return s.writeTail(db, t)
		})
		if err == nil && noted != 0 {
			if n := s.notes.Load(); n != nil {
				n.broadcast(noted) // this process's listeners, at once
			}
			if s.Dialect == Postgres {
				s.notifyAfterCommit(noted) // every process's (noteAfterCommit)
			}
		}
		if err == nil || !Retryable(err) || attempt == maxAttempts {
			return err
		}
		backoff := time.Duration(attempt*attempt) * time.Millisecond
		backoff += time.Duration(rand.Int64N(int64(2 * time.Millisecond)))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
	}
}

// Retryable reports whether err means "another transaction won; try again".
func Retryable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "40001" || pgErr.Code == "40P01" || pgErr.Code == "55P03"
	}
	var sqErr sqlite3.Error
	if errors.As(err, &sqErr) {
		return sqErr.Code == sqlite3.ErrBusy || sqErr.Code == sqlite3.ErrLocked
	}
	return false
}

// IsUniqueViolation reports whether err is a unique or primary key violation.
func IsUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "23505"
	}
	var sqErr sqlite3.Error
	if errors.As(err, &sqErr) {
		return sqErr.ExtendedCode == sqlite3.ErrConstraintUnique || sqErr.ExtendedCode == sqlite3.ErrConstraintPrimaryKey
	}
	return false
}

// conn runs fn on one pooled connection held for the whole of fn (a
// connection's own settings, a transaction begun by hand). fn's *gorm.DB
// starts every statement afresh: the one gorm's Connection hands over
// keeps its statement from call to call, so a Find's destination would
// stay the model of the next read.
func (s *Store) conn(ctx context.Context, fn func(db *gorm.DB) error) error {
	return s.WithContext(ctx).Connection(func(db *gorm.DB) error {
		return fn(db.Session(&gorm.Session{NewDB: true}))
	})
}

// forUpdate locks the rows a query reads until the transaction ends, on
// PostgreSQL. SQLite has no row locks; there every transaction already holds
// the database's write lock (BEGIN IMMEDIATE), which serializes writers.
func (s *Store) forUpdate(tx *gorm.DB) *gorm.DB {
	if s.Dialect == Postgres {
		return tx.Clauses(clause.Locking{Strength: "UPDATE"})
	}
	return tx
}

// Txn is one transaction. Packages outside store hold it only to pass it
// back to the store's methods, which are the only ones that run statements
// in it; that keeps every statement in this package.
type Txn struct {
	db *gorm.DB
	st *Store
}

// InTx runs fn in one transaction, replayed as tx replays it: fn must read,
// decide and write inside it, and be safe to run again.
func (s *Store) InTx(ctx context.Context, fn func(tx *Txn) error) error {
	return s.tx(ctx, func(db *gorm.DB) error { return fn(&Txn{db: db, st: s}) })
}

// Try runs fn inside a savepoint of tx. When fn fails, what it wrote is
// undone and the row locks it took are let go (PostgreSQL releases the
// locks of a subtransaction rolled back), the transaction goes on, and
// fn's error is answered: a create that lost the node it chose lets go of
// that node's lock before it locks the next, so it never holds two nodes
// out of id order.
//
// The events fn appended wait at the transaction's tail (writeTail) until
// it commits: those of an fn that failed are dropped with what it wrote.
func (s *Store) Try(tx *Txn, fn func() error) error {
	if err := tx.db.Exec("SAVEPOINT try").Error; err != nil {
		return err
	}
	t := tailOf(tx.db)
	mark := t.mark()
	if err := fn(); err != nil {
		if undo := tx.db.Exec("ROLLBACK TO SAVEPOINT try").Error; undo != nil {
			return undo // the transaction cannot go on: it is rolled back
		}
		t.undo(mark)
		return err
	}
	return tx.db.Exec("RELEASE SAVEPOINT try").Error
}
