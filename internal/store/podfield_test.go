package store_test

import (
	"context"
	"slices"
	"testing"

	"gpugraph/internal/lib/podfield"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// TestRegistryColumns follows the recipe for a sortable pod field (package
// podfield) on the store's side, for every field: its column exists in the
// pods table and in models.Pod, it is nullable exactly when the registry
// says (which decides how the store orders it), and a sortable one has its
// list index.
func TestRegistryColumns(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		table, err := st.PodTableColumns(ctx)
		if err != nil {
			t.Fatal(err)
		}
		model, err := st.PodModelColumns()
		if err != nil {
			t.Fatal(err)
		}
		indexes, err := st.Indexes(ctx, "pods")
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range podfield.All() {
			if f.Column == "" {
				for _, c := range f.Columns() {
					if _, ok := table[c]; !ok {
						t.Errorf("%s reads column %s, which pods lacks", f.JSON, c)
					}
				}
				continue
			}
			nullable, ok := table[f.Column]
			switch {
			case !ok:
				t.Errorf("%s: pods has no column %s", f.JSON, f.Column)
			case nullable != f.Nullable:
				t.Errorf("%s: column %s nullable = %v, the registry says %v", f.JSON, f.Column, nullable, f.Nullable)
			}
			if !slices.Contains(model, f.Column) {
				t.Errorf("%s: models.Pod has no field for column %s", f.JSON, f.Column)
			}
			if _, ok := indexes["pods_list_"+f.Column]; f.Sortable() && !ok {
				t.Errorf("%s is sortable but pods has no index pods_list_%s", f.JSON, f.Column)
			}
		}
	})
}
