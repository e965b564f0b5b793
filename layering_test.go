package main

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// listed is what `go list -json` says of one package of the module.
type listed struct {
	ImportPath   string
	Dir          string
	GoFiles      []string // non-test
	Imports      []string // direct, non-test
	Deps         []string // every package it depends on, transitively
	TestImports  []string // direct, of its in-package tests
	XTestImports []string // direct, of its external (_test package) tests
}

func listPackages(t *testing.T) map[string]listed {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps=false", "-json", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string]listed{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs[p.ImportPath] = p
	}
	return pkgs
}

// grouped reports whether package path sits in another package's folder
// only because the tree groups packages by layer: every service in package
// services' folder, the REST face, GraphQL's loaders and the routes'
// policy and error shapes (route, below the faces and the middleware) in
// the HTTP edge's.
func grouped(path string) bool {
	return strings.HasPrefix(path, "gpugraph/internal/services/") ||
		slices.ContainsFunc([]string{"gpugraph/internal/httpapi/rest", "gpugraph/internal/httpapi/loaders", "gpugraph/internal/httpapi/route"}, func(g string) bool {
			return path == g || strings.HasPrefix(path, g+"/")
		})
}

// under reports whether path is package root or one of root's own
// sub-packages: a rule on services or httpapi does not reach the packages
// grouped in their folders (grouped).
func under(path, root string) bool {
	return path == root || strings.HasPrefix(path, root+"/") && (grouped(root) || !grouped(path))
}

// TestLayering keeps the data flowing one way: faces (resolvers, rest) →
// services → store / placement → database. Each rule names the package
// that broke it and the import that did.
func TestLayering(t *testing.T) {
	pkgs := listPackages(t)

	// The two faces stand side by side: neither reaches into the other, and
	// REST knows nothing of GraphQL's types or per-request loaders.
	forbidden := map[string][]string{
		"gpugraph/internal/httpapi/rest": {"gpugraph/resolvers", "gpugraph/internal/httpapi/loaders", "gpugraph/graph", "github.com/99designs/gqlgen"},
		"gpugraph/resolvers":             {"gpugraph/internal/httpapi/rest"},
	}
	// Pure packages speak no HTTP, know no face and no store.
	for _, p := range []string{"gpugraph/placement", "gpugraph/internal/lib/timeseries", "gpugraph/internal/lib/filterby", "gpugraph/internal/lib/podfield", "gpugraph/internal/lib/contentcoding", "gpugraph/internal/lib/rowfield"} {
		forbidden[p] = []string{"net/http", "gpugraph/internal/httpapi/rest", "gpugraph/resolvers", "gpugraph/graph", "gpugraph/internal/store"}
	}
	// The field model is what make generate reads (cmd/gqlgen): it must
	// build without the code generated from it (graph/), and it knows no
	// column (the store names them) and no face.
	forbidden["gpugraph/internal/fieldmodel"] = []string{"gpugraph/graph", "gpugraph/internal/store", "gpugraph/internal/httpapi/rest", "gpugraph/resolvers", "net/http"}
	// Services hold the rules for both faces and know neither (an HTTP status
	// travels in an apierr.Error, which both faces render).
	for _, p := range []string{"gpugraph/internal/services/compute", "gpugraph/internal/services/hardware", "gpugraph/internal/services/pods", "gpugraph/internal/services/podmetrics", "gpugraph/internal/services/nodes", "gpugraph/internal/services/idempotency", "gpugraph/internal/services/fleet", "gpugraph/internal/services/promsource", "gpugraph/internal/services/nodeid", "gpugraph/internal/services/live", "gpugraph/internal/services/credentials", "gpugraph/internal/services", "gpugraph/internal/services/sweep"} {
		forbidden[p] = []string{"gpugraph/internal/httpapi/rest", "gpugraph/resolvers", "gpugraph/graph", "gpugraph/internal/httpapi/loaders", "github.com/99designs/gqlgen", "gorm.io"}
	}
	// httpapi is shaped as gqlgen's graphql/handler: the server and its
	// routes in httpapi, the transports, extensions and middleware in
	// sub-packages that serve through what the server hands them and
	// import neither it nor each other. Transports and extensions see
	// requests and operations: no store, no services, no face (what they
	// ask of the gate is an interface). The middleware sees HTTP only:
	// nothing of gqlgen, the generated executor or the field model, no
	// face (it serves both: a route's policy and its API's error shape
	// are package route's), and no dataloader (only /graphql builds them).
	const transportPkg, extensionPkg, middlewarePkg = "gpugraph/internal/httpapi/transport", "gpugraph/internal/httpapi/extension", "gpugraph/internal/httpapi/middleware"
	for _, p := range []string{transportPkg, extensionPkg} {
		forbidden[p] = []string{"gpugraph/internal/httpapi", "gpugraph/internal/store", "gpugraph/internal/services", "gpugraph/internal/httpapi/rest", "gpugraph/resolvers", "gpugraph/graph"}
	}
	forbidden[middlewarePkg] = []string{"gpugraph/internal/httpapi", "gpugraph/internal/store", "gpugraph/internal/services", "gpugraph/internal/httpapi/rest", "gpugraph/internal/httpapi/loaders", "gpugraph/resolvers", "gpugraph/graph", "gpugraph/internal/fieldmodel", "github.com/99designs/gqlgen"}
	// A route's policy and the REST APIs' error shapes sit below both
	// faces and the middleware, which all import them: they import none
	// of those, nor the HTTP edge, the services or the store.
	const routePkg = "gpugraph/internal/httpapi/route"
	forbidden[routePkg] = []string{"gpugraph/internal/httpapi", "gpugraph/internal/httpapi/rest", "gpugraph/internal/httpapi/loaders", "gpugraph/resolvers", "gpugraph/graph", "gpugraph/internal/services", "gpugraph/internal/store", "github.com/99designs/gqlgen"}
	// The rule reads real imports: the transports import gqlgen's, the
	// middleware and the REST face the routes' policy.
	if !slices.Contains(pkgs[transportPkg].Imports, "github.com/99designs/gqlgen/graphql/handler/transport") ||
		!slices.Contains(pkgs[middlewarePkg].Imports, routePkg) || !slices.Contains(pkgs["gpugraph/internal/httpapi/rest"].Imports, routePkg) {
		t.Fatalf("go list reports no gqlgen transport under %s, or no %s under %s or rest: the rules above would pass on anything", transportPkg, routePkg, middlewarePkg)
	}
	// Faces do not import the store: they call the services they are
	// handed (package services, built once per process by the command),
	// which read and write through it. Their sub-packages neither.
	for path := range pkgs {
		for _, face := range storelessFaces {
			if under(path, face) {
				forbidden[path] = append(forbidden[path], "gpugraph/internal/store")
			}
		}
	}
	for pkg, bans := range forbidden {
		p, ok := pkgs[pkg]
		if !ok {
			t.Errorf("package %s is missing: the layering rules name it", pkg)
			continue
		}
		for _, imp := range p.Imports {
			for _, ban := range bans {
				if under(imp, ban) {
					t.Errorf("%s imports %s: the layering forbids %s there", pkg, imp, ban)
				}
			}
		}
	}

	// …not even through another package.
	// (rowfield imports models, whose errors are apierr's, which know
	// their HTTP status: it is held to its direct imports only.)
	for _, pkg := range []string{"gpugraph/placement", "gpugraph/internal/lib/timeseries", "gpugraph/internal/lib/filterby", "gpugraph/internal/lib/podfield", "gpugraph/internal/lib/contentcoding"} {
		if slices.Contains(pkgs[pkg].Deps, "net/http") {
			t.Errorf("%s depends on net/http through its imports (go list -deps %s)", pkg, pkg)
		}
	}

	// Only the store speaks SQL: no other package imports gorm or a driver.
	for path, p := range pkgs {
		if under(path, "gpugraph/internal/store") {
			continue
		}
		for _, imp := range p.Imports {
			if under(imp, "gorm.io") || under(imp, "github.com/jackc/pgx/v5") || imp == "github.com/mattn/go-sqlite3" {
				t.Errorf("%s imports %s: only package store speaks to the database", path, imp)
			}
		}
	}
}

// storelessFaces are the faces, which translate HTTP and GraphQL, and
// never import the store (nor do their sub-packages). The HTTP edge,
// httpapi, is held to it by TestEdgeBuildsNoService, which leaves out
// its test server (servertest) and GraphQL's loaders.
var storelessFaces = []string{"gpugraph/internal/httpapi/rest", "gpugraph/resolvers", "gpugraph/web"}

// TestEdgeBuildsNoService keeps one composition root per process: the
// command (server.go's compose, and admin.go for the command line) builds
// the services (services.New) and the loaders factory (loaders.NewFactory)
// once over the store and hands them to the HTTP layer and the jobs alike.
// No non-test file of the HTTP edge (httpapi, its transports, extensions
// and middleware) imports the store or calls a constructor of a service
// package or the loaders factory; the edge serves through what
// httpapi.Config hands it. (servertest builds a test server's the way the
// command does; the loaders' own package is GraphQL's, over the store.)
func TestEdgeBuildsNoService(t *testing.T) {
	pkgs := listPackages(t)
	const edge, helper = "gpugraph/internal/httpapi", "gpugraph/internal/httpapi/servertest"
	checked := 0
	for path, p := range pkgs {
		if !under(path, edge) || under(path, helper) {
			continue
		}
		checked++
		for _, name := range p.GoFiles {
			for _, found := range builds(t, filepath.Join(p.Dir, name)) {
				t.Errorf("%s/%s %s: the command builds the services and loaders once per process and hands them to the edge (httpapi.Config)", path, name, found)
			}
		}
	}
	// The rule reads real code: it sees the edge's packages, and the
	// command's files build what the edge is handed.
	var root []string
	for _, name := range pkgs["gpugraph"].GoFiles {
		root = append(root, builds(t, filepath.Join(pkgs["gpugraph"].Dir, name))...)
	}
	for _, want := range []string{"calls services.New", "calls loaders.NewFactory", "imports gpugraph/internal/store"} {
		if !slices.Contains(root, want) {
			t.Errorf("the command's files show no %q (%v): the rule above would pass on anything", want, root)
		}
	}
	if checked < 4 {
		t.Errorf("checked %d packages of the edge: the rule above would pass on anything", checked)
	}
}

// builds names what file does that only the composition root may: import
// the store, call a New… of a service package (package services or one
// under it) or loaders.NewFactory.
func builds(t *testing.T, file string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{} // local name → import path
	var found []string
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if under(path, "gpugraph/internal/store") {
			found = append(found, "imports "+path)
		}
		name := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		names[name] = path
	}
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		x, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		path := names[x.Name]
		service := path == "gpugraph/internal/services" || strings.HasPrefix(path, "gpugraph/internal/services/")
		if service && strings.HasPrefix(sel.Sel.Name, "New") || path == "gpugraph/internal/httpapi/loaders" && sel.Sel.Name == "NewFactory" {
			found = append(found, "calls "+x.Name+"."+sel.Sel.Name)
		}
		return true
	})
	return found
}

// permissionNames are auth's names of the permissions.
var permissionNames = []string{"ComputeRead", "ComputeOperate", "WorkloadsRead", "MetricsWrite", "NodesReport", "NodesAdmin", "Admin"}

// TestFacesNameNoPermission keeps the permission an operation needs in its
// service (its May… gate, which calls caller.Require): no file of a face
// names one of auth's permissions. A REST route names its service's gate.
func TestFacesNameNoPermission(t *testing.T) {
	pkgs := listPackages(t)
	for path, p := range pkgs {
		face := under(path, "gpugraph/internal/httpapi")
		for _, f := range storelessFaces {
			face = face || under(path, f)
		}
		if !face {
			continue
		}
		for _, name := range p.GoFiles {
			file := filepath.Join(p.Dir, name)
			f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			authName := ""
			for _, imp := range f.Imports {
				if imp.Path.Value == `"gpugraph/internal/auth"` {
					authName = "auth"
					if imp.Name != nil {
						authName = imp.Name.Name
					}
				}
			}
			if authName == "" {
				continue
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					if x, ok := sel.X.(*ast.Ident); ok && x.Name == authName && slices.Contains(permissionNames, sel.Sel.Name) {
						t.Errorf("%s/%s names auth.%s: ask the gate of the service it calls (compute.Service.MayRead, …)", path, name, sel.Sel.Name)
					}
				}
				return true
			})
		}
	}
}

// TestStoreChoosesNoTransition keeps the lifecycle's decisions in the
// services: no non-test file of the store names one of the lifecycle
// table's transitions (models.NodeLost, models.AgentRunning, …). The
// store applies the transition a service hands it (store.Change) and
// offers lock, read and write primitives on a store.Txn; which transition
// a report, a sweep or a request causes is decided by nodes, sweep,
// compute and fleet.
func TestStoreChoosesNoTransition(t *testing.T) {
	pkgs := listPackages(t)
	names := transitionNames(t, pkgs["gpugraph/models"])
	if len(names) < 20 {
		t.Fatalf("found %d transition names in package models: the rule would pass on anything", len(names))
	}
	for path, p := range pkgs {
		if path != "gpugraph/internal/store" && !strings.HasPrefix(path, "gpugraph/internal/store/") {
			continue
		}
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(p.Dir, name), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			models := importName(f, "gpugraph/models", "models")
			if models == "" {
				continue
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					if x, ok := sel.X.(*ast.Ident); ok && x.Name == models && names[sel.Sel.Name] {
						t.Errorf("%s/%s names models.%s: the store applies the transition it is handed; the service decides which", path, name, sel.Sel.Name)
					}
				}
				return true
			})
		}
	}
}

// transitionNames are the constants of type TransitionName package models
// declares.
func transitionNames(t *testing.T, p listed) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	for _, name := range p.GoFiles {
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(p.Dir, name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				if typ, ok := vs.Type.(*ast.Ident); ok && typ.Name == "TransitionName" {
					for _, n := range vs.Names {
						names[n.Name] = true
					}
				}
			}
		}
	}
	return names
}

// importName is the name file f calls the package path by ("" when it
// does not import it); def is the package's own name.
func importName(f *ast.File, path, def string) string {
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == path {
			if imp.Name != nil {
				return imp.Name.Name
			}
			return def
		}
	}
	return ""
}

// TestLayeringRuleBites checks that the rule above reads real imports: the
// store itself must show up as a gorm importer.
func TestLayeringRuleBites(t *testing.T) {
	p := listPackages(t)["gpugraph/internal/store"]
	if !slices.Contains(p.Imports, "gorm.io/gorm") {
		t.Fatalf("go list reports no gorm import for gpugraph/internal/store (%v): the layering test would pass on anything", p.Imports)
	}
}

// TestAgentLinksNoSimulator keeps the simulator out of the real agent:
// package agent depends neither on internal/agent/sim nor on go-nvml's mock
// packages (the simulated DGX servers), not even through another package,
// and only the agent's --mock flag (cmd/agent) and the demo's in-process
// agents import the simulator; tests may.
func TestAgentLinksNoSimulator(t *testing.T) {
	pkgs := listPackages(t)
	const sim, nvmlMock = "gpugraph/internal/agent/sim", "github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	agent, ok := pkgs["gpugraph/internal/agent"]
	if !ok {
		t.Fatal("package gpugraph/internal/agent is missing")
	}
	for _, dep := range agent.Deps {
		if under(dep, sim) || under(dep, nvmlMock) {
			t.Errorf("gpugraph/internal/agent depends on %s: the real agent must not link the simulator (go list -deps gpugraph/internal/agent)", dep)
		}
	}
	allowed := []string{"gpugraph/cmd/agent", "gpugraph/demo/agents"}
	for path, p := range pkgs {
		if slices.Contains(p.Imports, sim) && !slices.Contains(allowed, path) && !under(path, sim) {
			t.Errorf("%s imports %s: only %v (and tests) may", path, sim, allowed)
		}
	}
	// The rule reads real dependencies: the agent's command links both
	// through its --mock flag.
	cmd := pkgs["gpugraph/cmd/agent"]
	if !slices.Contains(cmd.Deps, sim) || !slices.ContainsFunc(cmd.Deps, func(d string) bool { return under(d, nvmlMock) }) {
		t.Fatalf("go list reports no %s or %s under gpugraph/cmd/agent: the rule above would pass on anything", sim, nvmlMock)
	}
}

// walkerPackage is the package that walks GraphQL selection sets: the one
// walker (internal/fieldmodel/walk.go) that the limits, narrowing, prefetch and the
// plans share.
const walkerPackage = "gpugraph/internal/fieldmodel"

// walksSelections names what, in file f, walks a selection set itself: a
// call of gqlgen's CollectFields, the fragment node types a walk must tell
// apart (ast.InlineFragment, ast.FragmentSpread), or a loop over a
// selection set (range x.SelectionSet, range x.Selections).
func walksSelections(f *ast.File) []string {
	names := map[string]string{} // local name → import path
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		name := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		names[name] = path
	}
	var found []string
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			x, ok := n.X.(*ast.Ident)
			if !ok {
				break
			}
			switch path := names[x.Name]; {
			case path == "github.com/99designs/gqlgen/graphql" && n.Sel.Name == "CollectFields",
				path == "github.com/vektah/gqlparser/v2/ast" && (n.Sel.Name == "InlineFragment" || n.Sel.Name == "FragmentSpread"):
				found = append(found, x.Name+"."+n.Sel.Name)
			}
		case *ast.RangeStmt:
			if sel, ok := n.X.(*ast.SelectorExpr); ok && (sel.Sel.Name == "SelectionSet" || sel.Sel.Name == "Selections") {
				found = append(found, "range …."+sel.Sel.Name)
			}
		}
		return true
	})
	return found
}

// TestOnlyTheFieldModelWalksSelectionSets keeps one walker of selection
// sets: no package but fieldmodel (and gqlgen's generated executor in
// graph/) walks one itself.
func TestOnlyTheFieldModelWalksSelectionSets(t *testing.T) {
	for path, p := range listPackages(t) {
		if path == walkerPackage || strings.HasPrefix(path, "gpugraph/graph") {
			continue
		}
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(p.Dir, name), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			if found := walksSelections(f); len(found) > 0 {
				t.Errorf("%s/%s walks selection sets itself (%s): use the walker of package fieldmodel", path, name, strings.Join(found, ", "))
			}
		}
	}
}

// TestTheWalkerRuleBites checks that the rule above finds walks: the
// walker's own files do.
func TestTheWalkerRuleBites(t *testing.T) {
	p := listPackages(t)[walkerPackage]
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(p.Dir, "walk.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if found := walksSelections(f); !slices.Contains(found, "ast.FragmentSpread") || !slices.Contains(found, "graphql.CollectFields") {
		t.Fatalf("the rule finds %v in internal/fieldmodel/walk.go: it would pass on anything", found)
	}
}

// serverPackages are the packages whose tests may run the HTTP server
// (httpapi, or its test server internal/httpapi/servertest): the faces, the HTTP
// edge itself, the command and its sub-commands, and the demo and bench
// harnesses, which run the whole server by design.
var serverPackages = []string{"gpugraph", "gpugraph/internal/httpapi", "gpugraph/internal/httpapi/rest", "gpugraph/resolvers", "gpugraph/web", "gpugraph/cmd", "gpugraph/demo", "gpugraph/bench"}

// apiSuites reports whether package path's external tests may run the
// server through servertest: a service's, or the agent's, whose
// end-to-end tests run its binary against a server.
func apiSuites(path string) bool {
	return strings.HasPrefix(path, "gpugraph/internal/services/") || path == "gpugraph/internal/agent"
}

// serverClient is the package that is a client of the server's API, the
// cluster connector: its tests (in the package too, where its sender's
// retries are read) need a real server to talk to, through servertest.
const serverClient = "gpugraph/internal/cluster/clusterconnector"

// TestTestsBesideTheirCode keeps each package's tests on its own API: no
// test of a package that is not a face (a service, the store, the data
// set, …) imports httpapi or its test server internal/httpapi/servertest. The
// shared fixture is in internal/dataset/datasettest, which speaks no HTTP.
// Two exceptions run the server through servertest only (never httpapi
// itself): a service's or the agent's external test package (apiSuites),
// the suite that pins what the service does as the API serves it, beside
// the service, so that httpapi's own suite keeps to the contract; and
// the tests of the API's one client in the tree (serverClient).
func TestTestsBesideTheirCode(t *testing.T) {
	serves := func(path string) bool {
		if path == "gpugraph" {
			return true
		}
		for _, p := range serverPackages[1:] {
			if under(path, p) {
				return true
			}
		}
		return false
	}
	pkgs := listPackages(t)
	checked := 0
	for path, p := range pkgs {
		if serves(path) {
			continue
		}
		checked++
		for _, imp := range p.TestImports {
			if under(imp, "gpugraph/internal/httpapi") && !(path == serverClient && imp == "gpugraph/internal/httpapi/servertest") {
				t.Errorf("a test of %s imports %s: test the package's own API (the fixture is in gpugraph/internal/dataset/datasettest); only %v run the server", path, imp, serverPackages)
			}
		}
		for _, imp := range p.XTestImports {
			if !under(imp, "gpugraph/internal/httpapi") || (apiSuites(path) || path == serverClient) && imp == "gpugraph/internal/httpapi/servertest" {
				continue
			}
			t.Errorf("a test of %s imports %s: test the package's own API (the fixture is in gpugraph/internal/dataset/datasettest); only %v run the server, and the external tests of a service or the agent through gpugraph/internal/httpapi/servertest", path, imp, serverPackages)
		}
	}
	// The rule reads real test imports: the contract suite imports the
	// test server, and the store's tests the fixture.
	if !slices.Contains(pkgs["gpugraph/internal/httpapi"].XTestImports, "gpugraph/internal/httpapi/servertest") ||
		!slices.Contains(pkgs["gpugraph/internal/store"].XTestImports, "gpugraph/internal/dataset/datasettest") || checked < 20 {
		t.Fatalf("go list reports no test imports of internal/httpapi/servertest under httpapi or of datasettest under store (%d packages checked): the rule above would pass on anything", checked)
	}
}
