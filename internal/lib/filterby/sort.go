package filterby

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"gpugraph/internal/lib/podfield"
)

// SortField is a sortable pod field by its canonical name, e.g. "nodeName".
// The GraphQL enum PodSortField binds to it (gqlgen.yml), so a GraphQL
// sortBy and a REST one parse into the same value.
type SortField string

// Order is a sort direction; the GraphQL enum SortOrder binds to it.
type Order uint8

// The directions; the zero Order is ascending.
const (
	Asc Order = iota
	Desc
)

// Sort is a pods order: a sortable field and a direction. The zero Sort is
// the default, createdAt ascending.
type Sort struct {
	Field SortField // "" means createdAt
	Order Order
}

// DefaultSortField is the order when sortBy is absent.
const DefaultSortField SortField = "createdAt"

// SortOf is the order GraphQL's optional sortBy and sortOrder ask for; nil
// means the default (createdAt, asc).
func SortOf(by *SortField, order *Order) Sort {
	s := Sort{Field: DefaultSortField}
	if by != nil {
		s.Field = *by
	}
	if order != nil {
		s.Order = *order
	}
	return s
}

// ParseSort reads the sortBy and sortOrder parameters; empty means the
// default (createdAt, asc). sortBy takes the Run:ai names (and currentNodePool
// like filterBy); sortOrder takes "asc" or "desc". Both are case-sensitive.
// A bad one is an *Error naming it.
func ParseSort(sortBy, sortOrder string) (Sort, error) {
	s := Sort{Field: DefaultSortField}
	if sortBy != "" {
		fd, ok := podfield.ByParam(sortBy)
		if !ok || !fd.Sortable() {
			return Sort{}, &Error{Param: "sortBy", Text: sortBy, Reason: "unknown field; want one of " + sortFieldNames()}
		}
		s.Field = SortField(fd.Name())
	}
	switch sortOrder {
	case "", "asc":
	case "desc":
		s.Order = Desc
	default:
		return Sort{}, &Error{Param: "sortOrder", Text: sortOrder, Reason: "want asc or desc"}
	}
	return s, nil
}

func sortFieldNames() string {
	var names []string
	for _, f := range podfield.Sortable() {
		names = append(names, f.Name())
	}
	return strings.Join(names, ", ")
}

// PodField is the pod field s orders by: the default for an unknown one, so
// a Sort built by hand orders by a column of the registry.
func (s Sort) PodField() *podfield.Field {
	if fd, ok := podfield.ByParam(string(s.Field)); ok && fd.Sortable() {
		return fd
	}
	fd, _ := podfield.ByParam(string(DefaultSortField))
	return fd
}

// UnmarshalGQL reads a PodSortField value, e.g. NODE_NAME.
func (f *SortField) UnmarshalGQL(v any) error {
	str, ok := v.(string)
	if !ok {
		return fmt.Errorf("enums must be strings")
	}
	fd, ok := podfield.ByEnum(str)
	if !ok {
		return fmt.Errorf("%s is not a valid PodSortField", str)
	}
	*f = SortField(fd.Name())
	return nil
}

// MarshalGQL writes f as its PodSortField value.
func (f SortField) MarshalGQL(w io.Writer) {
	fd, _ := podfield.ByParam(string(f))
	enum := ""
	if fd != nil {
		enum = fd.Enum
	}
	fmt.Fprint(w, strconv.Quote(enum))
}

// UnmarshalGQL reads a SortOrder value, ASC or DESC.
func (o *Order) UnmarshalGQL(v any) error {
	str, ok := v.(string)
	if !ok {
		return fmt.Errorf("enums must be strings")
	}
	switch str {
	case "ASC":
		*o = Asc
	case "DESC":
		*o = Desc
	default:
		return fmt.Errorf("%s is not a valid SortOrder", str)
	}
	return nil
}

// MarshalGQL writes o as its SortOrder value.
func (o Order) MarshalGQL(w io.Writer) {
	s := "ASC"
	if o == Desc {
		s = "DESC"
	}
	fmt.Fprint(w, strconv.Quote(s))
}
