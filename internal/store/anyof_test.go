package store_test

import (
	"context"
	"slices"
	"testing"

	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// Batch reads bind their keys as one array on PostgreSQL: keys that need
// quoting in an array literal (quotes, backslashes, commas, braces, spaces,
// NULL spelled out) read exactly their rows, on both engines.
func TestBatchReadsMatchKeysExactly(t *testing.T) {
	ids := []string{`plain`, `with "quote"`, `back\slash`, `a,b`, `{brace}`, `sp ace`, `NULL`, `ünï`}
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		for _, id := range append(ids, "other") {
			if err := st.DB.Create(&models.GPUModel{ID: id, Name: "n-" + id, Manufacturer: "NVIDIA"}).Error; err != nil {
				t.Fatal(err)
			}
		}
		got, err := st.GPUModelsByIDs(ctx, append(ids, "missing"))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, m := range got {
			names = append(names, m.ID)
		}
		slices.Sort(names)
		want := slices.Clone(ids)
		slices.Sort(want)
		if !slices.Equal(names, want) {
			t.Fatalf("read %q, want %q", names, want)
		}
	})
}
