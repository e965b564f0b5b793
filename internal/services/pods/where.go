package pods

import (
	"errors"
	"slices"

	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/lib/filterby"
	"gpugraph/internal/lib/podfield"
)

// Typed filters: GraphQL's PodFilter, {field: {operator: value}}, read as
// the data it is. Each operator set on a field is read by filterby as the
// filterBy text "field op value" would be, so both spellings take the same
// fields, values and operators and compile to the same SQL; only the errors
// differ, naming the typed path (where.createdAt.gte) instead of the text.

// whereOps are the typed operators and the filterBy operators they stand for.
var whereOps = map[string]filterby.Op{
	"eq":          filterby.Eq,
	"ne":          filterby.Ne,
	"lte":         filterby.Le,
	"gte":         filterby.Ge,
	"contains":    filterby.Contains,
	"notContains": filterby.NotContains,
	"startsWith":  filterby.StartsWith,
	"endsWith":    filterby.EndsWith,
}

// whereFilters reads typed filters, fields and operators in name order (they
// AND, so the order changes nothing but the first error reported); a null
// field or operator filters nothing. Each error is a 400 naming its path.
func whereFilters(where map[string]any) ([]filterby.Filter, error) {
	var out []filterby.Filter
	for _, name := range sortedKeys(where) {
		fd, ok := podfield.ByJSON(name)
		if !ok || !fd.Filter {
			return nil, apierr.BadRequest("where.%s: not a field pods filter on", name)
		}
		if where[name] == nil {
			continue
		}
		ops, ok := where[name].(map[string]any)
		if !ok {
			return nil, apierr.BadRequest("where.%s: want an object of operators", name)
		}
		for _, opName := range sortedKeys(ops) {
			op, ok := whereOps[opName]
			if !ok {
				return nil, apierr.BadRequest("where.%s.%s: unknown operator", name, opName)
			}
			if ops[opName] == nil {
				continue
			}
			v, ok := ops[opName].(string)
			if !ok {
				return nil, apierr.BadRequest("where.%s.%s: want a string", name, opName)
			}
			f, err := filterby.ParseOne(fd.Name() + string(op) + v)
			var fe *filterby.Error
			if errors.As(err, &fe) {
				return nil, apierr.BadRequest("where.%s.%s: %s", name, opName, fe.Reason)
			}
			if err != nil {
				return nil, err
			}
			out = append(out, f)
		}
	}
	return out, nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
