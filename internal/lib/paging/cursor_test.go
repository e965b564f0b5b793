package paging

import "testing"

func TestCursorRoundTrip(t *testing.T) {
	keys := []Key{
		{Sort: []*string{new("gpu-node-1")}, ID: "n1"},
		{Sort: []*string{nil}, ID: "vm-1"},
		{Sort: []*string{new("n1"), new("7")}, ID: "n1-g7"},
		{Sort: []*string{new(`a"b,c\d ü`)}, ID: ""},
	}
	for _, k := range keys {
		c := EncodeCursor("list", k)
		p, err := ParseCursor("list", len(k.Sort), nil, &c)
		if err != nil || p.After == nil || p.After.ID != k.ID || len(p.After.Sort) != len(k.Sort) {
			t.Fatalf("%+v: %q → %+v, %v", k, c, p.After, err)
		}
		for i, v := range k.Sort {
			if (v == nil) != (p.After.Sort[i] == nil) || v != nil && *v != *p.After.Sort[i] {
				t.Fatalf("%+v: sort %d reads back %v", k, i, p.After.Sort[i])
			}
		}
		if p.First != DefaultLimit {
			t.Fatalf("first = %d", p.First)
		}
		// Another list, or another number of sort keys, refuses it.
		if _, err := ParseCursor("other", len(k.Sort), nil, &c); err == nil {
			t.Fatalf("%q read as a cursor of another list", c)
		}
		if _, err := ParseCursor("list", len(k.Sort)+1, nil, &c); err == nil {
			t.Fatalf("%q read with another number of keys", c)
		}
	}
}

func TestParseCursorBounds(t *testing.T) {
	for _, first := range []int{0, -1, MaxLimit + 1} {
		if _, err := ParseCursor("l", 1, &first, nil); err == nil {
			t.Errorf("first %d accepted", first)
		}
	}
	first, empty := MaxLimit, ""
	if p, err := ParseCursor("l", 1, &first, &empty); err != nil || p.First != MaxLimit || p.After != nil {
		t.Errorf("first %d, after \"\": %+v %v", first, p, err)
	}
	for _, bad := range []string{"x", "!!!", EncodeCursor("l", Key{ID: "a"})[1:], "bnVsbA", "WyJsIiwxLCJhIl0"} {
		if _, err := ParseCursor("l", 1, nil, &bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// FuzzParseCursor: any text as after is a cursor that reads back to what
// encoding it gives, or a 400; never a panic.
func FuzzParseCursor(f *testing.F) {
	f.Add(EncodeCursor("l", Key{Sort: []*string{new("a")}, ID: "1"}))
	f.Add(EncodeCursor("l", Key{Sort: []*string{nil}, ID: "1"}))
	f.Add("WyJsIixbbnVsbF0sIjEiXQ")
	f.Add("")
	f.Add("%%%")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseCursor("l", 1, nil, &s)
		if err != nil || p.After == nil {
			return
		}
		again := EncodeCursor("l", *p.After)
		q, err := ParseCursor("l", 1, nil, &again)
		if err != nil || q.After.ID != p.After.ID {
			t.Fatalf("%q reads as %+v, which encodes as %q and reads as %+v, %v", s, p.After, again, q.After, err)
		}
	})
}
