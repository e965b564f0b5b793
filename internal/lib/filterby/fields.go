package filterby

import "gpugraph/internal/lib/podfield"

// Op is a filter operator.
type Op string

// The operators of Run:ai's filterBy.
const (
	Eq          Op = "=="
	Ne          Op = "!="
	Le          Op = "<="
	Ge          Op = ">="
	Contains    Op = "=@"
	NotContains Op = "!@"
	StartsWith  Op = "=^"
	EndsWith    Op = "=$"
)

// Ops is every operator; all are two bytes long, which the parser relies on.
var Ops = []Op{Eq, Ne, Le, Ge, Contains, NotContains, StartsWith, EndsWith}

func knownOp(s string) (Op, bool) {
	for _, o := range Ops {
		if string(o) == s {
			return o, true
		}
	}
	return "", false
}

// ForDates reports whether o applies to a date field: the Run:ai docs allow
// only the four comparisons on dates.
func (o Op) ForDates() bool { return o == Eq || o == Ne || o == Le || o == Ge }

// filterField answers the field filterBy names so, in either spelling.
func filterField(name string) (*podfield.Field, bool) {
	f, ok := podfield.ByParam(name)
	if !ok || !f.Filter {
		return nil, false
	}
	return f, true
}

// isFieldByte reports whether c may appear in a field name. It is wider than
// the names themselves so that "k8sPhasex==1" reads as an unknown field
// "k8sPhasex", not as k8sPhase with a bad operator.
func isFieldByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// isOpByte reports whether c may start or continue an operator; it bounds the
// field name quoted in an unknown-field error.
func isOpByte(c byte) bool {
	switch c {
	case '=', '!', '<', '>', '@', '^', '$':
		return true
	}
	return false
}
