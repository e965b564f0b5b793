package web_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"gpugraph/internal/lib/npmtest"
)

// clientcheck is the check's modules, installed by clientcheck/install.sh.
var clientcheck = npmtest.Modules{
	What:       "CLIENT CHECK",
	Lockfile:   "clientcheck/package-lock.json",
	Cache:      "gpugraph-clientcheck",
	DirEnv:     "GPUGRAPH_CLIENTCHECK_DIR",
	RequireEnv: "GPUGRAPH_REQUIRE_CLIENTCHECK",
	Install:    "sh web/clientcheck/install.sh",
}

// Front-end toolchains accept the schema: graphql-js builds the client
// schema from introspection, @graphql-codegen generates a TypeScript client
// for a console's operations, and tsc --strict compiles it.
func TestClientToolchains(t *testing.T) {
	node, modules := clientcheck.Find(t)
	work := t.TempDir()
	for _, f := range []string{"check.mjs", "operations.graphql", "usage.ts"} {
		b, err := os.ReadFile(filepath.Join("clientcheck", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(work, f), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(modules, filepath.Join(work, "node_modules")); err != nil {
		t.Fatal(err)
	}
	srv := demoServer(t)
	cmd := exec.Command(node, "check.mjs", srv.URL+"/graphql", "acme-reader")
	cmd.Dir = work
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// /graphql passes the GraphQL Foundation's GraphQL over HTTP audit
// (graphql-http's auditServer, every request with a key): no error, and
// no warning but those docs/decisions/0010-graphql-over-http.md explains (audit.mjs's allow-list).
func TestGraphQLOverHTTPAudit(t *testing.T) {
	node, modules := clientcheck.Find(t)
	work := t.TempDir()
	b, err := os.ReadFile(filepath.Join("clientcheck", "audit.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "audit.mjs"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(modules, filepath.Join(work, "node_modules")); err != nil {
		t.Fatal(err)
	}
	srv := demoServer(t)
	cmd := exec.Command(node, "audit.mjs", srv.URL+"/graphql", "acme-reader")
	cmd.Dir = work
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Logf("%s", out)
}
