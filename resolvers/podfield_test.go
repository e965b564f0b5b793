package resolvers

import (
	"slices"
	"testing"

	"gpugraph/graph"
	"gpugraph/internal/lib/filterby"
	"gpugraph/internal/lib/podfield"
)

// TestRegistryMatchesSchema follows the recipe for a sortable pod field
// (package podfield) on the GraphQL side, for every field: the sortable
// entries are the PodSortField enum, value for value and in order, each
// reads into the Sort its REST spellings read into, and the registry holds
// exactly the fields of the GraphQL Pod, so the projection knows them all.
func TestRegistryMatchesSchema(t *testing.T) {
	schema := graph.NewExecutableSchema(graph.Config{}).Schema()

	var enum, sortable []string
	for _, v := range schema.Types["PodSortField"].EnumValues {
		enum = append(enum, v.Name)
	}
	for _, f := range podfield.Sortable() {
		sortable = append(sortable, f.Enum)
		var by filterby.SortField
		if err := by.UnmarshalGQL(f.Enum); err != nil {
			t.Errorf("PodSortField %s: %v", f.Enum, err)
			continue
		}
		for _, name := range []string{f.Name(), f.JSON} {
			s, err := filterby.ParseSort(name, "")
			if err != nil {
				t.Errorf("REST sortBy=%s: %v", name, err)
			} else if s != filterby.SortOf(&by, nil) {
				t.Errorf("REST sortBy=%s reads %+v, PodSortField %s %+v", name, s, f.Enum, filterby.SortOf(&by, nil))
			}
		}
	}
	if !slices.Equal(enum, sortable) {
		t.Errorf("PodSortField is %v, the registry's sortable fields %v", enum, sortable)
	}

	var gql []string
	for _, f := range schema.Types["Pod"].Fields {
		gql = append(gql, f.Name)
		if _, ok := podfield.ByJSON(f.Name); !ok {
			t.Errorf("GraphQL Pod.%s is not in the registry", f.Name)
		}
	}
	for _, f := range podfield.All() {
		if !slices.Contains(gql, f.JSON) {
			t.Errorf("registry field %s is not a field of the GraphQL Pod", f.JSON)
		}
	}
}
