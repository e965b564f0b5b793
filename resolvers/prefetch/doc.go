// Package prefetch reads, before a GraphQL list's nested fields run, every
// nested level its query selects: one statement per level and loader,
// whatever the page size, primed into the request's loaders so the nested
// field resolvers answer from their cache.
//
// What each nested field reads is declared once, in a Registry of Fields:
// (GraphQL type, field) → the loader it fills and the key a parent object
// gives it. One walker (Below) follows the query's selection sets with
// graphql.CollectFields, looks every selected field up in the registry,
// reads each loader once for all the parents of a level, and walks on into
// the rows it read with the field's own selection. Nothing else in it knows
// the schema: a field that is not registered is simply not prefetched (its
// resolver still loads through the batched loader, at a cost that grows
// with the page when the machine is busy), which is why the resolvers'
// tests compare the registry with the generated schema.
//
// # Adding a nested GraphQL field with prefetch
//
//  1. Declare the field in schema.graphqls, mark it `resolver: true` in
//     gqlgen.yml, run `make generate` and write its resolver, which loads
//     through a loader of the request (loaders.For(ctx)).
//
//  2. Add one entry to the registry beside the resolvers
//     (resolvers/prefetch.go):
//
//     prefetch.Load("Pod", "node", loaders.NodeByName, podNodeKey),
//
//     naming the loader the resolver loads from and the key it loads by.
//
//  3. Only when the field needs a loader no field reads yet: add it to
//     loaders.Loaders with its caller-scoped fetch, and a loaders.Source
//     for it.
//
// The resolvers' completeness test fails until step 2 is done for a
// resolver field whose type is an object or a list of objects.
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
// A field declared Plain is one whose resolver answers exactly what its
// loader holds for the key (null for a zero key): package plan writes it
// from the loader's cache without calling the resolver (Registry.Follow).
//
// Only object types are walked: a field of an interface or union type
// would need each row's concrete type, and the schema has none.
package prefetch
