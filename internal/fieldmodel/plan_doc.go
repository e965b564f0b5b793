// Plans: a Planner writes the JSON of a GraphQL list selection straight from
// the rows its resolver and prefetch read, instead of through gqlgen's
// per-field machinery.
//
// gqlgen executes a selection field by field: a field context, a
// middleware call and, for a list, a goroutine per element, then a
// marshaler value per field. On a page of 500 pods with their nodes and
// GPUs that is thousands of goroutines and tens of thousands of small
// allocations per request, several times the CPU the SQL costs. Yet once a
// list's resolver has run, everything the query selects below it is
// already in memory: the rows it answered, and the nested levels its
// prefetch primed into the request's loaders.
//
// A Planner is a gqlgen extension. For each planned root field (Planned)
// it compiles the field's selection once per cached document into a plan:
// for each selected field, where its value is (the struct field of the row
// gqlgen's binding reads, or a field declared Plain, read from its
// loader's cache) and how gqlgen marshals it (the marshal function and
// cast the generated code calls, from the same binding: Bindings). At execution gqlgen
// still parses, validates, costs and runs the root resolver with its
// arguments; the Planner captures the resolver's answer, hands gqlgen an
// empty one of the same type to marshal, and writes the real answer's JSON
// itself. The bytes are gqlgen's: fields in CollectFields order under
// their response keys, the same scalar marshalers, null and [] where the
// generated code writes them.
//
// Whatever a plan does not cover is gqlgen's, per root field: a selection
// with a field the plan cannot read (a resolver that derives its value,
// a field with arguments, a deferred fragment), or an answer the plan
// would have to report an error for (a non-null field without a value, a
// failed load), runs through gqlgen as if the Planner were not there, so
// errors and partial data are exactly gqlgen's. Tenancy is untouched: the
// rows are the ones the caller-scoped resolver and loaders read. Each
// cached plan's first answer is checked against gqlgen's (selfCheck).

package fieldmodel
