package store

import (
	"context"

	"gpugraph/filterby"
)

// FilterSQL, FiltersSQL and OrderSQL are the pods list's compilers, for the
// tests that pin their SQL text.
var (
	FilterSQL  = filterSQL
	FiltersSQL = filtersSQL
	OrderSQL   = orderSQL
)

// NeverSQL is what a filter filterby would not have made compiles to.
const NeverSQL = never

// ExecForTest runs one statement, for seeding test rows.
func (s *Store) ExecForTest(ctx context.Context, sql string, args ...any) error {
	return s.WithContext(ctx).Exec(sql, args...).Error
}

// PodIDsWhere answers the ids of every pod, deleted or not, of any tenant,
// that filters select, by id.
func (s *Store) PodIDsWhere(ctx context.Context, filters []filterby.Filter) ([]string, error) {
	var ids []string
	db := s.WithContext(ctx).Table("pods")
	if sql, args := filtersSQL(filters); sql != "" {
		db = db.Where(sql, args...)
	}
	return ids, db.Order("id").Pluck("id", &ids).Error
}

// PodIDsOrdered answers the ids of every pod in the order of sort, written
// for PostgreSQL alone (postgres true) or for any engine.
func (s *Store) PodIDsOrdered(ctx context.Context, sort filterby.Sort, postgres bool) ([]string, error) {
	var ids []string
	return ids, s.WithContext(ctx).Table("pods").Order(orderSQL(sort, postgres)).Pluck("id", &ids).Error
}
