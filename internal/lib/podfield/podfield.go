// Package podfield is the one registry of the Run:ai pod's fields: for each,
// its JSON key, its pods column, whether filterBy and sortBy take it, its
// GraphQL PodSortField value, whether it may be null, how a filter compares
// it, and which columns a GraphQL selection of it reads.
//
// Every reader of a pod field reads this table: filterby parses filterBy and
// sortBy against it, the store compiles filters and orders from it, the
// GraphQL read path projects a selection onto columns with it (fieldmodel's
// narrowing of Pod) and binds PodSortField to it, and the REST writer is
// checked against it. It lives in a package of its own, importing nothing
// but the standard library, so that all of them (store, filterby,
// fieldmodel, resolvers, rest) can import it without a cycle and without
// pulling in SQL or HTTP.
//
// # Adding a sortable pod field
//
//  1. Add an entry to fields below: JSON key, Column, Filter: true, Enum (the
//     PodSortField value), Nullable when the column may be null, and Date
//     when filters compare it as an instant. Sortable entries come first,
//     in the enum's order: the sortBy error lists them in this order.
//  2. Add the enum value to PodSortField in schema.graphqls, in the same
//     place, and the field to the GraphQL Pod type if it is new there.
//  3. If the column is new, add it to models.Pod, the REST writer
//     (internal/httpapi/rest/runai_pod.go) and a migration; every sortable column needs the
//     list index pods_list_<column> (see internal/store/migrations/0005_pods_indexes*).
//
// Nothing else changes: filterBy, sortBy, the GraphQL enum binding, the SQL
// and the projection all follow the entry. TestRegistryMatchesSchema
// (resolvers), TestRegistryColumns (store) and TestRunaiPodKeys (rest) fail
// until the three steps are done.
package podfield

// Kind is how a filter compares a field.
type Kind uint8

const (
	// Text compares strings byte for byte and takes every operator.
	Text Kind = iota
	// Date compares instants and takes ==, !=, <= and >= only.
	Date
)

// Field is one field of the pod object.
type Field struct {
	// JSON is the key in Run:ai's pod object, and the GraphQL Pod field.
	JSON string
	// Param is the name filterBy and sortBy use when Run:ai's docs spell it
	// otherwise than JSON; either spelling is accepted.
	Param string
	// Column is the pods column; "" for a GraphQL relation.
	Column string
	// Filter marks a field filterBy takes.
	Filter bool
	// Enum is the GraphQL PodSortField value; "" when sortBy does not take
	// the field.
	Enum string
	// Nullable marks a column that may be null: its order needs an explicit
	// null key on engines that disagree on where nulls go.
	Nullable bool
	// Kind is how a filter compares the field.
	Kind Kind
	// UUID marks a field Run:ai's schema declares "format: uuid": stored
	// in lower case, and compared case-insensitively (filterBy values are
	// lower-cased), as UUIDs are (RFC 9562).
	UUID bool
	// Reads are the columns a GraphQL selection of the field needs, when
	// they are not just Column (a relation reads the keys it joins on).
	Reads []string
}

// Name is the field's canonical name in filterBy, sortBy and their errors.
func (f *Field) Name() string {
	if f.Param != "" {
		return f.Param
	}
	return f.JSON
}

// Sortable reports whether sortBy takes the field.
func (f *Field) Sortable() bool { return f.Enum != "" }

// Columns are the columns a GraphQL selection of the field reads.
func (f *Field) Columns() []string {
	if f.Reads != nil {
		return f.Reads
	}
	return []string{f.Column}
}

// fields is the registry. The sortable fields come first, in the order of
// the PodSortField enum.
var fields = []Field{
	{JSON: "name", Column: "name", Filter: true, Enum: "NAME"},
	{JSON: "clusterId", UUID: true, Column: "cluster_id", Filter: true, Enum: "CLUSTER_ID"},
	{JSON: "workloadId", UUID: true, Column: "workload_id", Filter: true, Enum: "WORKLOAD_ID"},
	{JSON: "revisionId", UUID: true, Column: "revision_id", Filter: true, Enum: "REVISION_ID", Nullable: true},
	{JSON: "nodeName", Column: "node_name", Filter: true, Enum: "NODE_NAME", Nullable: true},
	{JSON: "currentNodePool", Param: "currentNodepool", Column: "current_node_pool", Filter: true, Enum: "CURRENT_NODEPOOL", Nullable: true},
	{JSON: "createdAt", Column: "created_at", Filter: true, Enum: "CREATED_AT", Kind: Date},
	{JSON: "completedAt", Column: "completed_at", Filter: true, Enum: "COMPLETED_AT", Nullable: true, Kind: Date},
	{JSON: "deletedAt", Column: "deleted_at", Filter: true, Enum: "DELETED_AT", Nullable: true, Kind: Date},
	{JSON: "k8sPhase", Column: "k8s_phase", Filter: true, Enum: "K8S_PHASE"},
	{JSON: "projectId", Column: "project_id", Filter: true, Nullable: true},
	{JSON: "priorityClassName", Column: "priority_class_name", Filter: true},

	{JSON: "id", UUID: true, Column: "id"},
	{JSON: "containers", Column: "containers", Nullable: true},
	{JSON: "requestedNodePools", Column: "requested_node_pools", Nullable: true},
	{JSON: "requestedResources", Column: "requested_resources", Nullable: true},
	{JSON: "allocatedResources", Column: "allocated_resources", Nullable: true},
	{JSON: "tolerations", Column: "tolerations", Nullable: true},
	{JSON: "ip", Column: "ip", Nullable: true},
	{JSON: "task", Column: "task", Nullable: true},
	{JSON: "nodeAffinity", Column: "node_affinity", Nullable: true},
	{JSON: "tenantId", Column: "tenant_id"},
	{JSON: "k8sPhaseUpdatedAt", Column: "k8s_phase_updated_at"},
	{JSON: "updatedAt", Column: "updated_at"},
	{JSON: "projectName", Column: "project_name", Nullable: true},
	{JSON: "workloadName", Column: "workload_name", Nullable: true},

	// GraphQL relations: no column of their own, they read the keys.
	{JSON: "node", Reads: []string{"node_name", "cluster_id"}},
	{JSON: "workload", Reads: []string{"workload_id"}},
	{JSON: "project", Reads: []string{"project_id"}},
}

var (
	byJSON  = map[string]*Field{}
	byParam = map[string]*Field{}
	byEnum  = map[string]*Field{}
)

func init() {
	for i := range fields {
		f := &fields[i]
		byJSON[f.JSON] = f
		if f.Filter || f.Sortable() {
			// Run:ai's docs and its pod object spell some fields apart;
			// clients reasonably send either.
			byParam[f.JSON] = f
			byParam[f.Name()] = f
		}
		if f.Sortable() {
			byEnum[f.Enum] = f
		}
	}
}

// All answers every field, sortable ones first in the enum's order.
func All() []*Field {
	out := make([]*Field, len(fields))
	for i := range fields {
		out[i] = &fields[i]
	}
	return out
}

// Sortable answers the fields sortBy takes, in the enum's order.
func Sortable() []*Field {
	var out []*Field
	for i := range fields {
		if fields[i].Sortable() {
			out = append(out, &fields[i])
		}
	}
	return out
}

// ByJSON answers the field with this JSON key (the GraphQL Pod field name).
func ByJSON(key string) (*Field, bool) {
	f, ok := byJSON[key]
	return f, ok
}

// ByParam answers the field filterBy or sortBy names so, in either spelling;
// only fields that one of them takes are found.
func ByParam(name string) (*Field, bool) {
	f, ok := byParam[name]
	return f, ok
}

// ByEnum answers the sortable field of a PodSortField value.
func ByEnum(value string) (*Field, bool) {
	f, ok := byEnum[value]
	return f, ok
}

// CanonicalUUID answers s in lower case when it is spelt as a UUID
// (8-4-4-4-12 hex digits), and s unchanged otherwise. UUIDs compare
// case-insensitively (RFC 9562) and Run:ai's schema marks the pod's id,
// workloadId, revisionId and clusterId "format: uuid": the server stores
// them in this canonical lower case and lower-cases what a client sends
// for them (path parameters, filterBy values), so an upper-case copy of an
// id finds what the id finds.
func CanonicalUUID(s string) string {
	if c, ok := ParseUUID(s); ok {
		return c
	}
	return s
}

// ParseUUID answers s in CanonicalUUID's lower case and true when it is
// spelt as a UUID (8-4-4-4-12 hex digits in either case), false otherwise.
func ParseUUID(s string) (string, bool) {
	if len(s) != 36 {
		return "", false
	}
	b := []byte(s)
	for i, c := range b {
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return "", false
			}
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f':
		case 'A' <= c && c <= 'F':
			b[i] = c + 'a' - 'A'
		default:
			return "", false
		}
	}
	return string(b), true
}
