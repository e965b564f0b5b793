package podfield

import (
	"slices"
	"testing"
)

func TestCanonicalUUID(t *testing.T) {
	for in, want := range map[string]string{
		"AAAAAAAA-0000-4000-8000-00000000000A": "aaaaaaaa-0000-4000-8000-00000000000a",
		"aaaaaaaa-0000-4000-8000-00000000000a": "aaaaaaaa-0000-4000-8000-00000000000a",
		"441D6C3E-9B1F-4C6B-8E2D-0F1A2B3C4D5E": "441d6c3e-9b1f-4c6b-8e2d-0f1a2b3c4d5e",
		// Not spelt as a UUID: unchanged, whatever its case.
		"NOT-A-UUID":                           "NOT-A-UUID",
		"AAAAAAAA-0000-4000-8000-00000000000":  "AAAAAAAA-0000-4000-8000-00000000000",
		"AAAAAAAAX0000-4000-8000-00000000000A": "AAAAAAAAX0000-4000-8000-00000000000A",
		"GAAAAAAA-0000-4000-8000-00000000000A": "GAAAAAAA-0000-4000-8000-00000000000A",
		"":                                     "",
	} {
		if got := CanonicalUUID(in); got != want {
			t.Errorf("CanonicalUUID(%q) = %q, want %q", in, got, want)
		}
	}
}

// The sortable fields come first, in the enum's order, and each sortable
// field is found by its enum value; the sortBy error lists them so.
func TestSortableFirst(t *testing.T) {
	all, sortable := All(), Sortable()
	if len(sortable) == 0 || len(sortable) >= len(all) {
		t.Fatalf("%d sortable of %d", len(sortable), len(all))
	}
	for i, f := range sortable {
		if all[i] != f {
			t.Errorf("sortable field %d is %s, but the registry's %d is %s", i, f.JSON, i, all[i].JSON)
		}
		if g, ok := ByEnum(f.Enum); !ok || g != f {
			t.Errorf("ByEnum(%q) = %v", f.Enum, g)
		}
	}
}

func TestLookups(t *testing.T) {
	// Run:ai spells currentNodePool currentNodepool in filterBy and sortBy:
	// either finds it, and the canonical name is the parameter's.
	a, okA := ByParam("currentNodepool")
	b, okB := ByParam("currentNodePool")
	if !okA || !okB || a != b || a.Name() != "currentNodepool" || a.Column != "current_node_pool" {
		t.Errorf("currentNodepool: %v %v %v %v", a, okA, b, okB)
	}
	// A field neither filterBy nor sortBy takes is not a parameter.
	if f, ok := ByParam("containers"); ok {
		t.Errorf("containers is a parameter: %v", f)
	}
	if f, ok := ByJSON("containers"); !ok || f.Column != "containers" || f.Sortable() || f.Filter {
		t.Errorf("containers: %v %v", f, ok)
	}
	if _, ok := ByEnum("CONTAINERS"); ok {
		t.Error("CONTAINERS is a sort value")
	}
	// A relation reads the keys it joins on; a column reads itself.
	if f, _ := ByJSON("node"); !slices.Equal(f.Columns(), []string{"node_name", "cluster_id"}) {
		t.Errorf("node reads %q", f.Columns())
	}
	if f, _ := ByJSON("name"); !slices.Equal(f.Columns(), []string{"name"}) {
		t.Errorf("name reads %q", f.Columns())
	}
}

// The fields Run:ai's schema declares "format: uuid" are marked, and no
// other.
func TestUUIDFields(t *testing.T) {
	var got []string
	for _, f := range All() {
		if f.UUID {
			got = append(got, f.JSON)
		}
	}
	slices.Sort(got)
	if want := []string{"clusterId", "id", "revisionId", "workloadId"}; !slices.Equal(got, want) {
		t.Errorf("UUID fields %q, want %q", got, want)
	}
}
