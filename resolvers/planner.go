package resolvers

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"

	"gpugraph/graph"
	"gpugraph/resolvers/plan"
)

// plannedRoots are the Query fields whose answers a plan writes (package
// plan): the lists and pages a console reads in bulk. Each answers a list
// or a page whose empty value gqlgen marshals without a resolver.
var plannedRoots = []string{
	"pods", "workloadPods", "revisionPods", "podsConnection",
	"vms", "vmsConnection",
	"nodes", "nodeList", "nodesConnection", "gpus",
	"workloads", "projects", "gpuModels",
}

// NewPlanner makes the planner of schema: the planned roots with the Go
// types their resolvers answer, the fields gqlgen answers through a
// resolver method (read off the generated resolver interfaces), and the
// nested fields a plan reads from the loaders, the Plain ones of the
// prefetch registry. check, when not nil, is plan.Config.Check;
// cacheBytes is plan.Config.CacheBytes.
func NewPlanner(schema *ast.Schema, check func(ctx context.Context, root string, planned, gqlgen []byte), cacheBytes int64) *plan.Planner {
	roots := map[string]reflect.Type{}
	query := reflect.TypeFor[graph.QueryResolver]()
	for _, name := range plannedRoots {
		m, ok := methodFold(query, name)
		if !ok {
			panic(fmt.Sprintf("resolvers: planned root %s has no resolver", name))
		}
		roots[name] = m.Type.Out(0)
	}
	resolved := map[string][]string{}
	root := reflect.TypeFor[graph.ResolverRoot]()
	for i := 0; i < root.NumMethod(); i++ {
		m := root.Method(i)
		var typ string
		for name := range schema.Types {
			if strings.EqualFold(name, m.Name) {
				typ = name
			}
		}
		iface := m.Type.Out(0)
		for j := 0; j < iface.NumMethod(); j++ {
			resolved[typ] = append(resolved[typ], iface.Method(j).Name)
		}
	}
	return plan.New(plan.Config{Schema: schema, Roots: roots, Resolved: resolved, Follow: prefetchRegistry.Follow, Check: check, CacheBytes: cacheBytes})
}

// methodFold is iface's method named name, case aside.
func methodFold(iface reflect.Type, name string) (reflect.Method, bool) {
	for i := 0; i < iface.NumMethod(); i++ {
		if m := iface.Method(i); strings.EqualFold(m.Name, name) {
			return m, true
		}
	}
	return reflect.Method{}, false
}
