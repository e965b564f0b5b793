package models

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/lib/apierr"
)

// The Run:ai face's instants: a zone, or none (read as UTC), in the
// spellings of DateTimePattern only.
func TestParseTimeDefaultUTC(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v.UTC()
	}
	for _, c := range []struct {
		in   string
		want time.Time
	}{
		// Python's naive datetime.isoformat(), with and without microseconds.
		{"2025-02-01T10:00:00", at("2025-02-01T10:00:00Z")},
		{"2025-02-01T10:00:00.123456", at("2025-02-01T10:00:00.123456Z")},
		{"2025-02-01T10:00:00.5", at("2025-02-01T10:00:00.5Z")},
		{"2025-02-01T10:00:00.123456789", at("2025-02-01T10:00:00.123456789Z")},
		// With a zone, as ParseTime reads it.
		{"2025-02-01T10:00:00Z", at("2025-02-01T10:00:00Z")},
		{"2025-02-01T10:00:00.211Z", at("2025-02-01T10:00:00.211Z")},
		{"2025-02-01T12:00:00+02:00", at("2025-02-01T10:00:00Z")},
		{"2025-02-01T05:30:00.25-04:30", at("2025-02-01T10:00:00.25Z")},
		{"0001-01-01T00:00:00", at("0001-01-01T00:00:00Z")},
		{"9999-12-31T23:59:59.999999", at("9999-12-31T23:59:59.999999Z")},
	} {
		got, err := ParseTimeDefaultUTC(c.in)
		if err != nil || !got.Equal(c.want) || got.Location() != time.UTC {
			t.Errorf("%q: %v %v, want %v", c.in, got, err, c.want)
		}
	}
	const notISO = ` is not an ISO 8601 date-time (e.g. 2023-06-06T12:09:18.211Z; one without a zone, 2023-06-06T12:09:18.211, is read as UTC)`
	for _, c := range []struct{ in, want string }{
		{"2025-02-01", `"2025-02-01"` + notISO},
		{"2025-02-01 10:00:00", `"2025-02-01 10:00:00"` + notISO}, // str(datetime)
		{"2025-02-01T10:00", `"2025-02-01T10:00"` + notISO},
		{"2025-02-01T10:00:00,5", `"2025-02-01T10:00:00,5"` + notISO},
		{"2025-02-01T10:00:00.", `"2025-02-01T10:00:00."` + notISO},
		{"2025-02-01t10:00:00z", `"2025-02-01t10:00:00z"` + notISO},
		{"2025-02-01T1:00:00Z", `"2025-02-01T1:00:00Z"` + notISO},
		{"2025-02-01T10:00:00+0200", `"2025-02-01T10:00:00+0200"` + notISO},
		{"2025-02-01T10:00:00+02", `"2025-02-01T10:00:00+02"` + notISO},
		{"yesterday", `"yesterday"` + notISO},
		{"", `""` + notISO},
		{"2025-02-30T10:00:00", `"2025-02-30T10:00:00" is not a date-time of the calendar (a day or a second out of range)`},
		{"2025-02-01T10:00:60", `"2025-02-01T10:00:60" is not a date-time of the calendar (a day or a second out of range)`},
		{"0000-12-31T23:00:00", `"0000-12-31T23:00:00" is outside the years 0001 to 9999`},
		{"0001-01-01T00:30:00+01:00", `"0001-01-01T00:30:00+01:00" is outside the years 0001 to 9999`},
	} {
		_, err := ParseTimeDefaultUTC(c.in)
		if e, ok := apierr.As(err); err == nil || !ok || e.Status != 400 || e.Message != c.want {
			t.Errorf("%q: %v, want 400 %s", c.in, err, c.want)
		}
	}
}

// FuzzParseTimeDefaultUTC: whatever it reads matches DateTimePattern (what
// the REST document says) and is ParseTime's instant, the zone-less ones
// ParseTime's of the same text with Z; everything else is a 400.
func FuzzParseTimeDefaultUTC(f *testing.F) {
	for _, s := range []string{"2025-02-01T10:00:00", "2025-02-01T10:00:00.123456", "2025-02-01T10:00:00Z",
		"2025-02-01T12:00:00+02:00", "2025-02-30T10:00:00", "0000-01-01T00:00:00", "2025-02-01 10:00:00", "2025-02-01T10:00:00,5"} {
		f.Add(s)
	}
	pattern := regexp.MustCompile(DateTimePattern)
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseTimeDefaultUTC(s)
		if err != nil {
			if e, ok := apierr.As(err); !ok || e.Status != 400 || !strings.HasPrefix(e.Message, `"`) {
				t.Fatalf("%q: %v is not a 400 quoting the value", s, err)
			}
			return
		}
		if !pattern.MatchString(s) {
			t.Fatalf("%q read, but the document's pattern refuses it", s)
		}
		if got.Location() != time.UTC || got.Year() < 1 || got.Year() > 9999 {
			t.Fatalf("%q: %v", s, got)
		}
		zoned, zerr := ParseTime(s)
		if zerr != nil {
			// Zone-less: UTC, as if it had said so.
			if zoned, zerr = ParseTime(s + "Z"); zerr != nil {
				t.Fatalf("%q read as %v, but %q is no instant: %v", s, got, s+"Z", zerr)
			}
		}
		if !zoned.Equal(got) {
			t.Fatalf("%q: %v, ParseTime %v", s, got, zoned)
		}
	})
}
