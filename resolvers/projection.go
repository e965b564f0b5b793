package resolvers

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"gpugraph/podfield"
	"gpugraph/resolvers/prefetch"
)

// podColumns are the columns a page of pods must read for the GraphQL
// selection of its PodList: id always, then what the selected fields need,
// as the pod-field registry says.
// Outside GraphQL (REST writes whole pods) or when a field is unknown it
// answers nil: every column.
func podColumns(ctx context.Context) []string {
	sel, ok := prefetch.Selection(ctx, "Pod")
	if !ok {
		return nil
	}
	if sel == nil {
		return []string{"id"}
	}
	cols := []string{"id"}
	seen := map[string]bool{"id": true}
	for _, f := range graphql.CollectFields(graphql.GetOperationContext(ctx), sel, []string{"Pod"}) {
		if f.Name == "__typename" {
			continue
		}
		fd, ok := podfield.ByJSON(f.Name)
		if !ok {
			return nil
		}
		for _, c := range fd.Columns() {
			if !seen[c] {
				seen[c] = true
				cols = append(cols, c)
			}
		}
	}
	return cols
}
