package filterby

import (
	"strings"
	"time"
)

// ISO 8601 extended date-times with a zone; seconds are optional and a
// fraction after them (with . or ,) is accepted by time.Parse on its own.
var zonedLayouts = []string{
	"2006-01-02T15:04:05Z07:00",
	"2006-01-02T15:04:05Z0700",
	"2006-01-02T15:04:05Z07",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04Z0700",
	"2006-01-02T15:04Z07",
}

// The same without a zone: recognised only to say what is missing.
var localLayouts = []string{
	"2006-01-02T15:04:05",
	"2006-01-02T15:04",
}

// Outside these instants the UTC text has no 4-digit year, and SQLite, which
// compares instants as text, would misorder it. maxTime is the last
// microsecond so that rounding a finer instant up (see timeSQL) stays inside.
var (
	minTime = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	maxTime = time.Date(9999, 12, 31, 23, 59, 59, 999_999_000, time.UTC)
)

// parseDate reads an ISO 8601 instant and answers it in UTC, or a reason to
// reject it. A date-time without a zone is rejected rather than read as UTC:
// guessing would silently shift the client's window by its offset.
func parseDate(v string) (time.Time, string) {
	// RFC 3339 allows lower-case t and z; time.Parse does not.
	u := strings.ToUpper(v)
	if t, ok := parseAny(zonedLayouts, u); ok {
		t = t.UTC()
		if t.Before(minTime) || t.After(maxTime) {
			return time.Time{}, reasonDateRange
		}
		return t, ""
	}
	if _, ok := parseAny(localLayouts, u); ok {
		return time.Time{}, reasonDateNoZone
	}
	// An unescaped + in a query string arrives as a space.
	if strings.Contains(u, " ") {
		if _, ok := parseAny(zonedLayouts, strings.ReplaceAll(u, " ", "+")); ok {
			return time.Time{}, reasonBadDatePlus
		}
	}
	return time.Time{}, reasonBadDate
}

func parseAny(layouts []string, s string) (time.Time, bool) {
	for _, l := range layouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}
