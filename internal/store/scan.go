package store

import (
	"context"
	"database/sql"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/stdlib"
	"gorm.io/gorm"

	"gpugraph/internal/lib/rowfield"
	"gpugraph/models"
)

// The loaders' batch reads answer thousands of rows a request (500 pods'
// nodes, their GPUs, workloads): scanned by gorm, reflection over every
// column of every row cost more CPU than the statements themselves. These
// reads name their columns and scan each row into its fields directly: a
// table lists each column beside the field it scans into.

// rowsOf runs query and makes one *T per row with scan.
func rowsOf[T any](ctx context.Context, s *Store, scan func(rowScanner, *T) error, query string, args ...any) ([]*T, error) {
	return readRows(ctx, s, s.WithContext(ctx).Raw(query, args...), scan)
}

// readRows runs the statement q builds and makes one *T per row with scan:
// on PostgreSQL through pgx itself (pgxRows), on SQLite through gorm.
func readRows[T any](ctx context.Context, s *Store, q *gorm.DB, scan func(rowScanner, *T) error) ([]*T, error) {
	if s.Dialect == Postgres {
		return pgxRows(ctx, s, q, scan)
	}
	rows, err := q.Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return collect(rows, scan)
}

// rowScanner is a row being read: *sql.Rows or pgx.Rows.
type rowScanner interface{ Scan(dest ...any) error }

// rowIter is what collect reads: *sql.Rows or pgx.Rows.
type rowIter interface {
	rowScanner
	Next() bool
	Err() error
}

// collect makes one *T per row of rows with scan.
func collect[T any](rows rowIter, scan func(rowScanner, *T) error) ([]*T, error) {
	var out []*T
	for rows.Next() {
		v := new(T)
		if err := scan(rows, v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// pgxRows runs the statement q would run (gorm builds it, and gorm's
// callbacks see it as they see every statement, without running it) on a
// connection of the pool through pgx itself, and makes one *T per row with
// scan: pgx scans each column straight into its field, where database/sql
// would make an interface value of it first and convert that.
func pgxRows[T any](ctx context.Context, s *Store, q *gorm.DB, scan func(rowScanner, *T) error) ([]*T, error) {
	dry := q.Session(&gorm.Session{DryRun: true}).Find(&[]T{})
	if dry.Error != nil {
		return nil, dry.Error
	}
	query, args := dry.Statement.SQL.String(), dry.Statement.Vars
	sqlDB, err := s.DB.DB()
	if err != nil {
		return nil, err
	}
	conn, err := sqlDB.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	var out []*T
	err = conn.Raw(func(dc any) error {
		rows, err := dc.(*stdlib.Conn).Conn().Query(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		out, err = collect(rows, scan)
		return err
	})
	return out, err
}

// A table lists the columns a read may fill, each with the field it
// scans into, and the columns every read fills (keys: what rows are found,
// grouped and ordered by).
type table[T any] struct {
	name    string
	columns []column[T]
	always  map[string]bool

	once    sync.Once
	byField map[string]string // Go field → column (goFields)
}

type column[T any] struct {
	name string
	into func(*T) any
}

// Columns names the columns of a table a read fills, its others left zero;
// nil fills every column. Names the table does not list are no column.
type Columns []string

// pick is the select list of cols (the table's own names, in its order,
// never input) and the fields they scan into.
func (t *table[T]) pick(cols Columns) (string, []func(*T) any) {
	want := map[string]bool{}
	for _, c := range cols {
		want[c] = true
	}
	var names []string
	var into []func(*T) any
	for _, c := range t.columns {
		if cols == nil || want[c.name] || t.always[c.name] {
			names = append(names, c.name)
			into = append(into, c.into)
		}
	}
	return strings.Join(names, ", "), into
}

// read runs SELECT cols FROM t WHERE where (a condition of constant text
// with its arguments) and scans each row into the fields of cols; a narrowed
// read fills the columns keyed by as well (the rows' loader key and order).
func (t *table[T]) read(ctx context.Context, s *Store, cols Columns, keyedBy []string, where string, args ...any) ([]*T, error) {
	if cols != nil {
		cols = append(append(Columns{}, cols...), keyedBy...)
	}
	list, into := t.pick(cols)
	return rowsOf(ctx, s, scanInto(into), `SELECT `+list+` FROM `+t.name+` WHERE `+where, args...)
}

// fields answers the fields cols scan into, in cols' order, when t lists
// every one of them (and cols names some).
func (t *table[T]) fields(cols []string) ([]func(*T) any, bool) {
	if len(cols) == 0 {
		return nil, false
	}
	into := make([]func(*T) any, 0, len(cols))
	for _, name := range cols {
		i := slices.IndexFunc(t.columns, func(c column[T]) bool { return c.name == name })
		if i < 0 {
			return nil, false
		}
		into = append(into, t.columns[i].into)
	}
	return into, true
}

// readQuery is read for a query gorm builds (q selects cols of t).
func (t *table[T]) readQuery(ctx context.Context, s *Store, q *gorm.DB, into []func(*T) any) ([]*T, error) {
	return readRows(ctx, s, q, scanInto(into))
}

// scanInto scans a row into the fields into points at, in order.
func scanInto[T any](into []func(*T) any) func(rowScanner, *T) error {
	dest := make([]any, len(into))
	return func(r rowScanner, v *T) error {
		for i, f := range into {
			dest[i] = f(v)
		}
		return r.Scan(dest...)
	}
}

// The tables the loaders read narrowed scan the columns of their rows'
// field registry (package rowfield), in its order, then the store's own.
var nodes = tableOf("nodes", rowfield.Node, set("id"))

var gpus = tableOf("gpus", rowfield.GPU, set("model_id"))

// tableOf is the table name of the columns of reg, always reading always,
// and then the columns more lists (the store's own).
func tableOf[T any](name string, reg *rowfield.Registry[T], always map[string]bool, more ...column[T]) *table[T] {
	t := &table[T]{name: name, always: always}
	for _, f := range reg.All() {
		if f.Column != "" {
			t.columns = append(t.columns, column[T]{f.Column, f.Into})
		}
	}
	t.columns = append(t.columns, more...)
	return t
}

func set(names ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

var gpuModels = &table[models.GPUModel]{name: "gpu_models", columns: []column[models.GPUModel]{
	{"id", func(m *models.GPUModel) any { return &m.ID }},
	{"name", func(m *models.GPUModel) any { return &m.Name }},
	{"manufacturer", func(m *models.GPUModel) any { return &m.Manufacturer }},
	{"memory_gb", func(m *models.GPUModel) any { return &m.MemoryGb }},
}}

var workloads = &table[models.Workload]{name: "workloads", columns: []column[models.Workload]{
	{"id", func(w *models.Workload) any { return &w.ID }},
	{"name", func(w *models.Workload) any { return &w.Name }},
	{"project_id", func(w *models.Workload) any { return &w.ProjectID }},
	{"cluster_id", func(w *models.Workload) any { return &w.ClusterID }},
	{"tenant_id", func(w *models.Workload) any { return &w.TenantID }},
}}

var projects = &table[models.Project]{name: "projects", columns: []column[models.Project]{
	{"id", func(p *models.Project) any { return &p.ID }},
	{"name", func(p *models.Project) any { return &p.Name }},
	{"tenant_id", func(p *models.Project) any { return &p.TenantID }},
}}

var vms = tableOf("vms", rowfield.VM, set("id"),
	// Nullable in the table, a plain time in the row.
	column[models.VM]{"updated_at", func(v *models.VM) any { return zeroIfNull{&v.UpdatedAt} }},
	column[models.VM]{"generation", func(v *models.VM) any { return &v.Generation }},
	column[models.VM]{"status_changed_at", func(v *models.VM) any { return &v.StatusChangedAt }},
	column[models.VM]{"deleted_at", func(v *models.VM) any { return &v.DeletedAt }},
)

// zeroIfNull scans a nullable time into a plain one, NULL as the zero time.
type zeroIfNull struct{ t *time.Time }

func (z zeroIfNull) Scan(src any) error {
	var n sql.NullTime
	if err := n.Scan(src); err != nil {
		return err
	}
	*z.t = n.Time
	return nil
}

// target is the field a wrapping scanner (zeroIfNull) scans into.
func (z zeroIfNull) target() any { return z.t }

// goFields maps each Go field of T a column scans into to that column,
// found by where each column's into points in a row: the table lists the
// pairs once, and this reads them back.
func (t *table[T]) goFields() map[string]string {
	t.once.Do(func() {
		t.byField = map[string]string{}
		row := new(T)
		v := reflect.ValueOf(row).Elem()
		for _, c := range t.columns {
			p := c.into(row)
			if w, ok := p.(interface{ target() any }); ok {
				p = w.target()
			}
			addr := reflect.ValueOf(p).Pointer()
			for i := 0; i < v.NumField(); i++ {
				if v.Field(i).Addr().Pointer() == addr && v.Type().Field(i).Type == reflect.TypeOf(p).Elem() {
					t.byField[v.Type().Field(i).Name] = c.name
				}
			}
		}
	})
	return t.byField
}

// ColumnOf answers the column that Go field goField of a row of T scans
// from, for the tables whose reads the loaders narrow to a query's fields
// (NodesByIDs, GPUsByNodeIDs, VMsByIDs, … take Columns): nodes, gpus and
// vms. ok is false for a field no column scans into, and for another T.
func ColumnOf[T any](goField string) (column string, ok bool) {
	var m map[string]string
	switch any((*T)(nil)).(type) {
	case *models.Node:
		m = nodes.goFields()
	case *models.GPU:
		m = gpus.goFields()
	case *models.VM:
		m = vms.goFields()
	}
	column, ok = m[goField]
	return column, ok
}
