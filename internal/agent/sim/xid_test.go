package sim

import "testing"

func TestParseXID(t *testing.T) {
	if x, err := ParseXID("3:79"); err != nil || x != (XID{Index: 3, XID: 79}) {
		t.Errorf("ParseXID(3:79) = %+v, %v", x, err)
	}
	for _, bad := range []string{"", "3", "3:", ":79", "-1:79", "a:79", "3:x", "3:-79"} {
		if _, err := ParseXID(bad); err == nil {
			t.Errorf("ParseXID(%q): want an error", bad)
		}
	}
	m, err := NewServer("dgxh100", "test-node")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.CheckIndexes([]XID{{Index: 7, XID: 79}}); err != nil {
		t.Error(err)
	}
	if err := m.CheckIndexes([]XID{{Index: 8, XID: 79}}); err == nil {
		t.Error("GPU 8 of 8 accepted")
	}
}
