package store

import (
	"context"

	"gorm.io/gorm"

	"gpugraph/internal/lib/filterby"
	"gpugraph/models"
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

// PodTableColumns answers each column of the pods table as the engine
// declares it, and whether it may hold null.
func (s *Store) PodTableColumns(ctx context.Context) (map[string]bool, error) {
	type col struct {
		Name     string
		Nullable bool
	}
	var cols []col
	// A primary key counts as NOT NULL: SQLite would let a text one hold
	// null, but every pod has an id.
	sql := `SELECT name, "notnull" = 0 AND pk = 0 AS nullable FROM pragma_table_info('pods')`
	if s.Dialect == Postgres {
		sql = `SELECT column_name AS name, is_nullable = 'YES' AS nullable FROM information_schema.columns
			WHERE table_schema = current_schema() AND table_name = 'pods'`
	}
	if err := s.WithContext(ctx).Raw(sql).Scan(&cols).Error; err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(cols))
	for _, c := range cols {
		out[c.Name] = c.Nullable
	}
	return out, nil
}

// Indexes answers the indexes of table, each name with its definition
// ("" for one SQLite makes for a key, which has no SQL of its own).
func (s *Store) Indexes(ctx context.Context, table string) (map[string]string, error) {
	sql := `SELECT name, COALESCE(sql, '') AS def FROM sqlite_master WHERE type = 'index' AND tbl_name = ?`
	if s.Dialect == Postgres {
		sql = `SELECT indexname AS name, indexdef AS def FROM pg_indexes WHERE schemaname = current_schema() AND tablename = ?`
	}
	var rows []struct{ Name, Def string }
	if err := s.WithContext(ctx).Raw(sql, table).Find(&rows).Error; err != nil {
		return nil, err
	}
	out := make(map[string]string, len(rows))
	for _, r := range rows {
		out[r.Name] = r.Def
	}
	return out, nil
}

// PodModelColumns answers the columns gorm reads models.Pod's fields from.
func (s *Store) PodModelColumns() ([]string, error) {
	stmt := &gorm.Statement{DB: s.DB}
	if err := stmt.Parse(&models.Pod{}); err != nil {
		return nil, err
	}
	return stmt.Schema.DBNames, nil
}
