package filterby

import "strings"

// Sort is a pods order: a sortable field and a direction. The zero Sort is
// the default, createdAt ascending.
type Sort struct {
	Field string // canonical field name; "" means createdAt
	Desc  bool
}

// DefaultSortField is the order when sortBy is absent.
const DefaultSortField = "createdAt"

// ParseSort reads the sortBy and sortOrder parameters; empty means the
// default (createdAt, asc). sortBy takes the Run:ai names (and currentNodePool
// like filterBy); sortOrder takes "asc" or "desc". Both are case-sensitive.
// A bad one is an *Error naming it.
func ParseSort(sortBy, sortOrder string) (Sort, error) {
	s := Sort{Field: DefaultSortField}
	if sortBy != "" {
		fd, ok := fields[sortBy]
		if !ok || !fd.sort {
			return Sort{}, &Error{Param: "sortBy", Text: sortBy, Reason: "unknown field; want one of " + sortFieldNames()}
		}
		s.Field = fd.name
	}
	switch sortOrder {
	case "", "asc":
	case "desc":
		s.Desc = true
	default:
		return Sort{}, &Error{Param: "sortOrder", Text: sortOrder, Reason: "want asc or desc"}
	}
	return s, nil
}

func sortFieldNames() string {
	var names []string
	for _, f := range fieldList {
		if f.sort {
			names = append(names, f.name)
		}
	}
	return strings.Join(names, ", ")
}

// OrderBy is the ORDER BY list for s, e.g. "(node_name IS NULL), node_name, id",
// for db.Order. It is built only from the fixed field table.
//
// Nulls come last in asc, and desc reverses every key, so desc is the exact
// reverse of asc. The final id breaks ties, so offset pages never repeat or
// skip a pod. The explicit null key is spelled out because the engines
// disagree on where nulls go by default; a NOT NULL column goes without it
// ("created_at, id"), which orders the same and lets an index on
// (…, created_at, id) serve the order on both engines.
func (s Sort) OrderBy() string {
	fd, ok := fields[s.Field]
	if !ok || !fd.sort {
		fd = fields[DefaultSortField]
	}
	c := fd.column
	switch {
	case fd.notNull && s.Desc:
		return c + " DESC, id DESC"
	case fd.notNull:
		return c + ", id"
	case s.Desc:
		return "(" + c + " IS NULL) DESC, " + c + " DESC, id DESC"
	}
	return "(" + c + " IS NULL), " + c + ", id"
}

// PostgresOrderBy is the order of OrderBy written for PostgreSQL alone,
// e.g. "node_name, id": PostgreSQL itself puts nulls last in ascending order
// and first in descending order, which is exactly OrderBy's order. Without
// the null key, an index on (…, node_name, id) serves the order and lets an
// equality or prefix filter on node_name bound the index range.
func (s Sort) PostgresOrderBy() string {
	fd, ok := fields[s.Field]
	if !ok || !fd.sort {
		fd = fields[DefaultSortField]
	}
	if s.Desc {
		return fd.column + " DESC, id DESC"
	}
	return fd.column + ", id"
}
