package paging

import (
	"encoding/base64"
	"encoding/json"

	"gpugraph/internal/lib/apierr"
)

// Cursor pages (GraphQL connections: first and after) are keyset pages: a
// cursor is the position of a row in its list's order, its sort key and its
// id, so rows inserted before it shift nothing and rows after it are read
// once each. The cursor is opaque to clients: base64 of a small JSON array,
// [list, sort key, id], where list names the list and its order, so that a
// cursor of another list or order is refused instead of read wrongly.

// Key is a row's position: the values of its list's sort keys, in order
// (nil where a key is null), and its id, which breaks ties.
type Key struct {
	Sort []*string
	ID   string
}

// CursorPage is a validated first and after.
type CursorPage struct {
	First int
	// After is the position to read after; nil reads from the start.
	After *Key
}

// EncodeCursor writes k's position in list as an opaque cursor.
func EncodeCursor(list string, k Key) string {
	b, _ := json.Marshal([]any{list, k.Sort, k.ID})
	return base64.RawURLEncoding.EncodeToString(b)
}

// ParseCursor checks first in 1–500 (default 50) and after, a cursor of
// list with its keys sort keys (nil or "": from the start); a bad one is a
// 400 naming it.
func ParseCursor(list string, keys int, first *int, after *string) (CursorPage, error) {
	p := CursorPage{First: DefaultLimit}
	if first != nil {
		if *first < 1 || *first > MaxLimit {
			return p, apierr.BadRequest("first must be between 1 and %d, got %d", MaxLimit, *first)
		}
		p.First = *first
	}
	if after == nil || *after == "" {
		return p, nil
	}
	k, ok := decodeCursor(list, *after)
	if !ok || len(k.Sort) != keys {
		return p, apierr.BadRequest("after is not a cursor of this list and order: pass an endCursor or edge cursor it answered")
	}
	p.After = &k
	return p, nil
}

func decodeCursor(list, s string) (Key, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return Key{}, false
	}
	var parts []json.RawMessage
	if json.Unmarshal(b, &parts) != nil || len(parts) != 3 {
		return Key{}, false
	}
	var name, id string
	var k Key
	if json.Unmarshal(parts[0], &name) != nil || name != list || json.Unmarshal(parts[1], &k.Sort) != nil || json.Unmarshal(parts[2], &id) != nil {
		return Key{}, false
	}
	k.ID = id
	return k, true
}
