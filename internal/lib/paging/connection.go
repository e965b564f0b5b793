package paging

// Connection is one cursor page of a list, as a service answers it: its
// rows with their cursors, whether rows follow, and the total when it was
// asked for.
type Connection[T any] struct {
	Rows    []*T
	Cursors []string
	// HasNext reports rows after the page.
	HasNext bool
	// After reports that the page was asked after a cursor.
	After bool
	// Total is how many rows match in all, when counted; else 0.
	Total int
}

// NewConnection makes the connection of rows read for page, each row's
// cursor written by key in list.
func NewConnection[T any](list string, page CursorPage, rows []*T, more bool, total int64, key func(*T) Key) *Connection[T] {
	c := &Connection[T]{Rows: rows, Cursors: make([]string, len(rows)), HasNext: more, After: page.After != nil, Total: int(total)}
	for i, r := range rows {
		c.Cursors[i] = EncodeCursor(list, key(r))
	}
	return c
}
