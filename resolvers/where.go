package resolvers

import (
	"time"

	"gpugraph/graph/model"
)

// podWhere translates GraphQL's PodFilter, which gqlgen reads as a map of
// typed operator objects, into the plain data package pods reads:
// {field: {operator: text}}, instants written back as RFC 3339 with every
// digit, so that pods compiles each operator as the filterBy text would be.
func podWhere(where map[string]any) map[string]any {
	if where == nil {
		return nil
	}
	out := make(map[string]any, len(where))
	for field, v := range where {
		ops := map[string]any{}
		switch f := v.(type) {
		case *model.StringFilter:
			if f == nil {
				continue
			}
			for op, s := range map[string]*string{
				"eq": f.Eq, "ne": f.Ne, "lte": f.Lte, "gte": f.Gte,
				"contains": f.Contains, "notContains": f.NotContains,
				"startsWith": f.StartsWith, "endsWith": f.EndsWith,
			} {
				if s != nil {
					ops[op] = *s
				}
			}
		case *model.TimeFilter:
			if f == nil {
				continue
			}
			for op, t := range map[string]*time.Time{"eq": f.Eq, "ne": f.Ne, "lte": f.Lte, "gte": f.Gte} {
				if t != nil {
					ops[op] = t.UTC().Format(time.RFC3339Nano)
				}
			}
		case nil:
			continue
		default:
			ops = nil // pods refuses it, naming the field
		}
		if ops == nil {
			out[field] = v
			continue
		}
		out[field] = ops
	}
	return out
}
