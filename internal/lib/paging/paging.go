// Package paging validates the offset and limit of every list, the same on
// both faces.
package paging

import (
	"math"

	"gpugraph/internal/lib/apierr"
)

// Page is a validated offset and limit.
type Page struct{ Offset, Limit int }

// The limits of every list: Run:ai's pods API documents them, and the VM
// list keeps the same.
const (
	DefaultLimit = 50
	MaxLimit     = 500
)

// Parse checks offset in 0–2147483647 (int32) and limit in 1–500, with the defaults 0 and 50;
// nil means the default. A bad one is a 400.
func Parse(offset, limit *int) (Page, error) {
	p := Page{Offset: 0, Limit: DefaultLimit}
	if offset != nil {
		if *offset < 0 {
			return p, apierr.BadRequest("offset must be 0 or more, got %d", *offset)
		}
		// Run:ai's schema types offset as int32.
		if *offset > math.MaxInt32 {
			return p, apierr.BadRequest("offset must be at most %d (int32), got %d", math.MaxInt32, *offset)
		}
		p.Offset = *offset
	}
	if limit != nil {
		if *limit < 1 || *limit > MaxLimit {
			return p, apierr.BadRequest("limit must be between 1 and %d, got %d", MaxLimit, *limit)
		}
		p.Limit = *limit
	}
	return p, nil
}

// Next is the offset of the page after this one, nil when none remains.
func (p Page) Next(total int64) *int {
	if n := p.Offset + p.Limit; int64(n) < total {
		return &n
	}
	return nil
}
