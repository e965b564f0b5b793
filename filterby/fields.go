package filterby

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

// ops is every operator; all are two bytes long, which the parser relies on.
var ops = []Op{Eq, Ne, Le, Ge, Contains, NotContains, StartsWith, EndsWith}

func knownOp(s string) (Op, bool) {
	for _, o := range ops {
		if string(o) == s {
			return o, true
		}
	}
	return "", false
}

// forDates reports whether o applies to a date field: the Run:ai docs allow
// only the four comparisons on dates.
func (o Op) forDates() bool { return o == Eq || o == Ne || o == Le || o == Ge }

// field is a filterable or sortable pods column.
type field struct {
	name   string // the canonical API name, as Run:ai spells it
	column string // the pods column; the only place SQL identifiers come from
	date   bool
	sort   bool // allowed as sortBy
	// notNull marks a column declared NOT NULL: its order needs no explicit
	// null key, and without one an index on the column serves the order.
	notNull bool
}

var fieldList = []field{
	{name: "name", column: "name", sort: true, notNull: true},
	{name: "clusterId", column: "cluster_id", sort: true, notNull: true},
	{name: "workloadId", column: "workload_id", sort: true, notNull: true},
	{name: "revisionId", column: "revision_id", sort: true},
	{name: "nodeName", column: "node_name", sort: true},
	{name: "currentNodepool", column: "current_node_pool", sort: true},
	{name: "createdAt", column: "created_at", date: true, sort: true, notNull: true},
	{name: "completedAt", column: "completed_at", date: true, sort: true},
	{name: "deletedAt", column: "deleted_at", date: true, sort: true},
	{name: "k8sPhase", column: "k8s_phase", sort: true, notNull: true},
	{name: "projectId", column: "project_id"},
	{name: "priorityClassName", column: "priority_class_name", notNull: true},
}

// fields maps every accepted spelling to its field. Run:ai's docs spell the
// field currentNodepool while the pod's JSON key is currentNodePool; clients
// reasonably send either.
var fields = func() map[string]field {
	m := make(map[string]field, len(fieldList)+1)
	for _, f := range fieldList {
		m[f.name] = f
	}
	m["currentNodePool"] = m["currentNodepool"]
	return m
}()

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
