// Package fieldmodel is the GraphQL read path's one declared field model,
// and the engine it drives.
//
// For each field of the schema's object types that gqlgen does not answer
// off a struct field alone, Declared holds one declaration (fields.go): the
// loader it loads from and the key a parent gives it (Load), the Go fields
// of the parent it reads (Reads), whether it answers exactly its loader's
// rows (Plain). With gqlgen's own bindings of the schema — which struct
// field each other field reads, what each scalar is marshaled with — that
// is everything the read path needs, and everything else is derived from
// it:
//
//   - the field's resolver: a Plain field's is generated (graph.<Type>Loads,
//     calling Resolve), and marked `resolver: true`, by this package's gqlgen
//     plugin at make generate (gqlgenplugin); a field that derives its value
//     (VM.gpuModelName) keeps a hand-written resolver that calls Resolve;
//   - prefetch: a list resolver calls Prefetch on the rows it answers, which
//     reads every nested level the query selects below them, one statement
//     per level and loader whatever the page size, primed into the
//     request's loaders (prefetch.go);
//   - column narrowing: a query's loaders read only the columns of nodes,
//     GPUs and VMs its fields read, and a page of pods only its pods'
//     (narrow.go); the store names the column of each Go field;
//   - plans: a Planner writes a planned root's answer straight from the
//     rows, following the Plain fields into the loaders' cache, and
//     marshals each scalar as the generated code does (plan_doc.go).
//
// Everything here that reads a query's selection reads it with the one
// walker of selection sets (walk.go), which httpapi's limits use too.
//
// # Adding a nested GraphQL field with prefetch, narrowing and a plan
//
//  1. Declare the field in schema.graphqls.
//
//  2. Add one declaration to Declared (fields.go), naming the loader it
//     loads from, the key it loads by and the Go fields the key reads:
//
//     Load("Pod", "node", loaders.NodeByName, podNodeKey, Plain, Reads("NodeName", "ClusterID")),
//
//  3. Run make generate.
//
// That is all: the generated resolver loads it, every list that selects it
// reads it ahead in one statement a level, narrowed reads fill its key's
// columns, and plans write it. A field whose value is derived from its
// rows (not Plain) keeps a resolver method of its own, which loads through
// Resolve. Only when the field needs a loader no field reads yet: add it to
// loaders.Loaders with its caller-scoped fetch, and a loaders.Source for it.
// TestEveryNestedObjectFieldIsDeclared fails for a resolver field that
// answers objects and is not declared; TestRecipeAddingANestedField
// follows the recipe on a schema of its own.
//
// # Adding a scalar field of a VM, a node or a GPU
//
// A field gqlgen reads off a struct field needs no declaration here: it is
// the Go field, one entry of its row's field registry (package rowfield:
// its column, where a read scans it) and the schema, as rowfield's doc
// says. Narrowing reads its column through gqlgen's binding and the
// store's registry; plans write it with the binding's marshaler;
// TestNarrowedTypesKnowEveryField fails for a field of Node, Gpu or VM
// whose column is unknown.
//
// # How prefetch reads
//
// A read happens at the level of the parents whose field selects it; two
// fields that fill the same loader at one level share one statement. A
// field declared with NextLevel reads one level later instead, so that it
// shares the statement of a deeper field that fills the same loader (a
// pod's project and its workload's project).
//
// A level's reads run at once, each its own statement: a level waits for
// its slowest read, not for their sum. A field declared SameKeyAs(src) is
// keyed by its parents' own key in src (Node.gpus by the node's id, the key
// of NodeByID's rows); where its parents are read from src it is read
// beside them, by the same keys, instead of one level later.
//
// Only object types are walked: a field of an interface or union type
// would need each row's concrete type, and the schema has none.
package fieldmodel
