// Package sqlcount counts, and on demand records, every SQL statement gorm
// runs on a database. Tests use it to pin how many statements a request
// costs; the benchmarks use it to replay a request's SQL by hand.
package sqlcount

import (
	"fmt"
	"sync"
	"sync/atomic"

	"gorm.io/gorm"
)

// Statement is one SQL statement gorm ran, with its bound values.
type Statement struct {
	SQL  string
	Vars []any
}

// Counter counts every statement gorm runs on a database (a gorm callback
// after each of create, query, update, delete, row and raw), and records
// them while recording is on.
type Counter struct {
	n         atomic.Int64
	mu        sync.Mutex
	recording bool
	recorded  []Statement
}

// Register adds the counting callbacks to db.
func Register(db *gorm.DB) (*Counter, error) {
	s := &Counter{}
	cb := db.Callback()
	regs := []struct {
		name string
		reg  func(func(*gorm.DB)) error
	}{
		{"create", func(f func(*gorm.DB)) error { return cb.Create().After("gorm:create").Register("sqlcount", f) }},
		{"query", func(f func(*gorm.DB)) error { return cb.Query().After("gorm:query").Register("sqlcount", f) }},
		{"update", func(f func(*gorm.DB)) error { return cb.Update().After("gorm:update").Register("sqlcount", f) }},
		{"delete", func(f func(*gorm.DB)) error { return cb.Delete().After("gorm:delete").Register("sqlcount", f) }},
		{"row", func(f func(*gorm.DB)) error { return cb.Row().After("gorm:row").Register("sqlcount", f) }},
		{"raw", func(f func(*gorm.DB)) error { return cb.Raw().After("gorm:raw").Register("sqlcount", f) }},
	}
	for _, r := range regs {
		if err := r.reg(s.observe); err != nil {
			return nil, fmt.Errorf("register %s callback: %w", r.name, err)
		}
	}
	return s, nil
}

func (s *Counter) observe(db *gorm.DB) {
	if db.Statement.SQL.Len() == 0 {
		return // a callback chain that stopped before running anything
	}
	s.n.Add(1)
	s.mu.Lock()
	if s.recording {
		vars := append([]any(nil), db.Statement.Vars...)
		s.recorded = append(s.recorded, Statement{SQL: db.Statement.SQL.String(), Vars: vars})
	}
	s.mu.Unlock()
}

// During counts the statements run while fn runs.
func (s *Counter) During(fn func()) int64 {
	before := s.n.Load()
	fn()
	return s.n.Load() - before
}

// Record answers the statements run while fn runs, in order.
func (s *Counter) Record(fn func()) []Statement {
	s.mu.Lock()
	s.recording, s.recorded = true, nil
	s.mu.Unlock()
	fn()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recording = false
	return s.recorded
}
