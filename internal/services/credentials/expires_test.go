package credentials

import (
	"testing"
	"time"

	"gpugraph/internal/lib/apierr"
)

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func TestParseExpires(t *testing.T) {
	for _, c := range []struct {
		in, want, err string
	}{
		{"", "", ""},
		{"90d", "2027-02-28T12:00:00Z", ""},
		{" 1d ", "2026-12-01T12:00:00Z", ""},
		{"36h", "2026-12-02T00:00:00Z", ""},
		{"1h30m", "2026-11-30T13:30:00Z", ""},
		{"1500ms", "2026-11-30T12:00:01Z", ""},
		{"2027-01-01T00:00:00+01:00", "2026-12-31T23:00:00Z", ""},
		{"0d", "", `expires "0d": want a number of days from 1 to 36500 (90d), a duration (36h) or an RFC 3339 instant`},
		{"36501d", "", `expires "36501d": want a number of days from 1 to 36500 (90d), a duration (36h) or an RFC 3339 instant`},
		{"-1h", "", `expires "-1h": a duration must be positive`},
		{"500ms", "", "expires 2026-11-30T12:00:00.000Z is not in the future"},
		{"2026-11-30T12:00:00Z", "", "expires 2026-11-30T12:00:00.000Z is not in the future"},
		{"tomorrow", "", `expires "tomorrow": want a number of days (90d), a duration (36h) or an RFC 3339 instant`},
		{"2027-01-01", "", `expires "2027-01-01": want a number of days (90d), a duration (36h) or an RFC 3339 instant`},
	} {
		got, err := ParseExpires(c.in, now)
		switch {
		case c.err != "":
			if e, ok := err.(*apierr.Error); !ok || e.Status != 400 || e.Message != c.err {
				t.Errorf("%q: %v, want 400 %q", c.in, err, c.err)
			}
		case err != nil:
			t.Errorf("%q: %v", c.in, err)
		case c.want == "" && got != nil:
			t.Errorf("%q: %v, want never", c.in, got)
		case c.want != "" && (got == nil || got.Format(time.RFC3339) != c.want):
			t.Errorf("%q: %v, want %s", c.in, got, c.want)
		}
	}
}

// Whatever it is given, ParseExpires answers an instant in the future
// (truncated to the second, UTC) or a 400, never a panic.
func FuzzParseExpires(f *testing.F) {
	for _, s := range []string{"", "90d", "36h", "1h30m", "2027-01-01T00:00:00Z", "-1d", "9999999999d", "1e9h", "d", "0x10d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseExpires(s, now)
		if err != nil {
			if e, ok := err.(*apierr.Error); !ok || e.Status != 400 {
				t.Fatalf("%q: %v", s, err)
			}
			return
		}
		if got != nil && (!got.After(now) || got.Location() != time.UTC || got.Nanosecond() != 0) {
			t.Fatalf("%q: %v", s, got)
		}
	})
}
