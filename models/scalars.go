package models

import (
	"cmp"
	"encoding/json"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"gpugraph/internal/lib/apierr"
)

// TimeLayout is how every instant leaves gpugraph: RFC 3339, UTC, milliseconds.
const TimeLayout = "2006-01-02T15:04:05.000Z07:00"

// FormatTime writes t as TimeLayout in UTC.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

// ParseTime reads an ISO 8601 / RFC 3339 instant with a zone and answers it in UTC.
func ParseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, apierr.BadRequest("%q is not an ISO 8601 instant with a zone (e.g. 2023-06-06T12:09:18.211Z)", s)
	}
	return inYears(s, t)
}

// inYears answers t in UTC when it is in the years 0001 to 9999.
func inYears(s string, t time.Time) (time.Time, error) {
	if t = t.UTC(); t.Year() < 1 || t.Year() > 9999 {
		// Year 0000 (or an offset that moves an instant out of 0001–9999)
		// is no instant both engines store.
		return time.Time{}, apierr.BadRequest("%q is outside the years 0001 to 9999", s)
	}
	return t, nil
}

// DateTimePattern is what ParseTimeDefaultUTC reads, as the REST document
// gives it for Run:ai's start and end (internal/httpapi/rest/openapi/gpugraph.json): an
// RFC 3339 date-time whose zone may be left out.
const DateTimePattern = `^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])?$`

var dateTimeRE = regexp.MustCompile(DateTimePattern)

// zonelessLayout is an ISO 8601 date-time without a zone (seconds, and any
// fraction of them: Python's datetime.isoformat() writes six digits, or
// none when the microseconds are 0).
const zonelessLayout = "2006-01-02T15:04:05.999999999"

// ParseTimeDefaultUTC reads the Run:ai REST face's instants: what
// ParseTime reads, and a date-time without a zone as UTC, as Python's
// naive datetime.isoformat() writes it (2025-02-01T10:00:00,
// 2025-02-01T10:00:00.123456) and runapy sends it. Only DateTimePattern's
// spellings are read (no date alone, no comma before the fraction), so
// the document's pattern says exactly what is taken; the answers' own
// instants stay FormatTime's.
func ParseTimeDefaultUTC(s string) (time.Time, error) {
	layout := time.RFC3339Nano
	if m := dateTimeRE.FindStringSubmatch(s); m == nil {
		return time.Time{}, apierr.BadRequest("%q is not an ISO 8601 date-time (e.g. 2023-06-06T12:09:18.211Z; one without a zone, 2023-06-06T12:09:18.211, is read as UTC)", s)
	} else if m[6] == "" { // the pattern's sixth group: Z or the offset
		layout = zonelessLayout
	}
	t, err := time.Parse(layout, s)
	if err != nil {
		// The pattern passed, the calendar did not (February 30th, :60).
		return time.Time{}, apierr.BadRequest("%q is not a date-time of the calendar (a day or a second out of range)", s)
	}
	return inYears(s, t)
}

// MarshalTime is the GraphQL Time scalar's writer.
func MarshalTime(t time.Time) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		_, _ = io.WriteString(w, strconv.Quote(FormatTime(t)))
	})
}

// UnmarshalTime is the GraphQL Time scalar's reader.
func UnmarshalTime(v any) (time.Time, error) {
	s, ok := v.(string)
	if !ok {
		return time.Time{}, apierr.BadRequest("Time must be a string, got %T", v)
	}
	return ParseTime(s)
}

// MarshalStringMap writes a JSON object of strings (labels, buckets) with
// its keys in StringMapKeys order.
func MarshalStringMap(m map[string]string) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		_, _ = w.Write(StringMapJSON(m))
	})
}

// StringMapJSON writes m as a JSON object with its keys in StringMapKeys
// order ("null" for a nil map).
func StringMapJSON(m map[string]string) []byte {
	if m == nil {
		return []byte("null")
	}
	b := []byte{'{'}
	for i, k := range StringMapKeys(m) {
		if i > 0 {
			b = append(b, ',')
		}
		key, _ := json.Marshal(k)
		val, _ := json.Marshal(m[k])
		b = append(append(append(b, key...), ':'), val...)
	}
	return append(b, '}')
}

// StringMapKeys orders a map's keys for the wire: by numeric value when
// every key is a number, so histogram buckets read by upper bound with
// "+Inf" last; otherwise in byte order, as encoding/json does.
func StringMapKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	bounds := make(map[string]float64, len(m))
	for k := range m {
		keys = append(keys, k)
		if f, err := strconv.ParseFloat(k, 64); err == nil && !math.IsNaN(f) {
			bounds[k] = f
		}
	}
	numeric := len(bounds) == len(keys)
	slices.SortFunc(keys, func(a, b string) int {
		if numeric {
			if c := cmp.Compare(bounds[a], bounds[b]); c != 0 {
				return c
			}
		}
		return strings.Compare(a, b)
	})
	return keys
}

// UnmarshalStringMap reads a JSON object whose values are strings.
func UnmarshalStringMap(v any) (map[string]string, error) {
	raw, ok := v.(map[string]any)
	if !ok {
		return nil, apierr.BadRequest("StringMap must be an object")
	}
	out := make(map[string]string, len(raw))
	for k, x := range raw {
		s, ok := x.(string)
		if !ok {
			return nil, apierr.BadRequest("StringMap value of %q must be a string", k)
		}
		out[k] = s
	}
	return out, nil
}

// MarshalFloat writes GraphQL floats in plain decimal (85899345920, not
// gqlgen's default 8.589934592e+10), which every JSON reader takes as is.
func MarshalFloat(f float64) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		_, _ = w.Write(strconv.AppendFloat(nil, f, 'f', -1, 64))
	})
}

// UnmarshalFloat reads a GraphQL float as gqlgen does.
func UnmarshalFloat(v any) (float64, error) { return graphql.UnmarshalFloat(v) }
