// Package bounds holds the bounds every input is checked against where it
// enters the server, the same on both faces and both engines, so that
// nothing reaches the database that it would refuse (PostgreSQL refuses NUL
// and invalid UTF-8 in text, SQLite's LIKE and expression tree have their
// own ceilings). Each refusal is a 400 naming the field.
package bounds

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/lib/podfield"
)

// The bounds, in bytes (docs/decisions/0011-limits.md).
const (
	MaxID          = 256  // ids and names: VM, node, pod, workload, revision, cluster ids
	MaxSearch      = 256  // a pods search value
	MaxFilterValue = 1024 // one filterBy value
	MaxFilters     = 64   // filterBy filters of one request, after comma splitting
	MaxParam       = 8192 // any other query parameter or GraphQL string argument
	MaxParamValues = 64   // values of one repeated query parameter

	MaxLabels     = 32   // labels of one metric series
	MaxLabelName  = 128  // one label name
	MaxLabelValue = 1024 // one label value (labels are part of the samples' primary key)
)

// Text refuses s unless it is valid UTF-8 without NUL and at most max bytes.
func Text(field, s string, max int) error {
	switch {
	case len(s) > max:
		return apierr.BadRequest("%s is longer than %d bytes", field, max)
	case !utf8.ValidString(s):
		return apierr.BadRequest("%s is not valid UTF-8", field)
	case strings.IndexByte(s, 0) >= 0:
		return apierr.BadRequest("%s contains a NUL character", field)
	}
	return nil
}

// MaxName bounds a name an agent or a cluster reports (a node's, a
// cluster's): a Kubernetes object name's length, a DNS subdomain's.
const MaxName = 253

// Name refuses what no agent or cluster could report as a name: empty,
// over MaxName bytes, not UTF-8, unprintable or spaced.
func Name(field, s string) error {
	ok := s != "" && len(s) <= MaxName && utf8.ValidString(s)
	for _, r := range s {
		ok = ok && unicode.IsPrint(r) && !unicode.IsSpace(r)
	}
	if !ok {
		return apierr.BadRequest("%s %q must be 1 to %d bytes of printable UTF-8 without spaces", field, s, MaxName)
	}
	return nil
}

// UUID answers s in lower case, the one spelling an id of Run:ai's
// "format: uuid" (a pod's, a workload's, a revision's, a cluster's) is
// stored and compared in, or refuses s unless it is 8-4-4-4-12 hex digits,
// naming field. UUIDs compare case-insensitively (RFC 9562): an upper-case
// copy of an id is the id.
func UUID(field, s string) (string, error) {
	if c, ok := podfield.ParseUUID(s); ok {
		return c, nil
	}
	return "", apierr.BadRequest("%s %.40q is not a UUID (8-4-4-4-12 hex digits), as Run:ai's schema has it", field, s)
}

// Int32 refuses n outside 0..2147483647 (an integer column).
func Int32(field string, n int64) error {
	if n < 0 || n > math.MaxInt32 {
		return apierr.BadRequest("%s must be between 0 and %d, got %d", field, math.MaxInt32, n)
	}
	return nil
}

// integer is an integer as JSON writes one: no "+", no leading zeros, no
// spaces, no underscores (strconv.Atoi takes "+5" and "007").
var integer = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)

// ParseInt reads a whole number of a query parameter or an id argument
// written as JSON writes it, and only so: "+5", "05", " 5" and "5.0" are
// refused, as an ambiguous spelling is anywhere at the edge.
func ParseInt(s string) (int64, bool) {
	if !integer.MatchString(s) {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}
