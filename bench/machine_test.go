package bench

import (
	"reflect"
	"testing"

	"gpugraph/internal/store"
)

func TestParseEngines(t *testing.T) {
	for _, c := range []struct {
		list, pg string
		want     []store.Dialect
		err      bool
	}{
		{"", "", []store.Dialect{store.SQLite}, false},
		{"", "postgres://x", []store.Dialect{store.SQLite, store.Postgres}, false},
		{"postgres, sqlite", "postgres://x", []store.Dialect{store.Postgres, store.SQLite}, false},
		{"postgres", "", nil, true},
		{"mysql", "", nil, true},
	} {
		got, err := ParseEngines(c.list, c.pg)
		if (err != nil) != c.err || !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseEngines(%q, %q) = %v, %v", c.list, c.pg, got, err)
		}
	}
}

func TestParseNumbers(t *testing.T) {
	if got, err := ParseNumbers("", 8); got != nil || err != nil {
		t.Errorf("empty: %v, %v", got, err)
	}
	if got, err := ParseNumbers("1, 8,3", 8); err != nil || !reflect.DeepEqual(got, map[int]bool{1: true, 3: true, 8: true}) {
		t.Errorf("1, 8,3: %v, %v", got, err)
	}
	for _, bad := range []string{"0", "9", "x", "1,,2"} {
		if _, err := ParseNumbers(bad, 8); err == nil {
			t.Errorf("%q read no error", bad)
		}
	}
}
