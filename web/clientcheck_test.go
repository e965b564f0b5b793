package web_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// clientcheckModules is where clientcheck/install.sh put the check's
// modules, or "" with the reason they cannot be used.
func clientcheckModules(t *testing.T) (string, string) {
	t.Helper()
	dir := os.Getenv("GPUGRAPH_CLIENTCHECK_DIR")
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return "", err.Error()
		}
		dir = filepath.Join(cache, "gpugraph-clientcheck")
	}
	installed, err := os.ReadFile(filepath.Join(dir, "node_modules", ".gpugraph-lock"))
	if err != nil {
		return "", "no modules in " + dir
	}
	want, err := os.ReadFile("clientcheck/package-lock.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(installed, want) {
		return "", "the modules in " + dir + " were installed from another package-lock.json"
	}
	return filepath.Join(dir, "node_modules"), ""
}

// Front-end toolchains accept the schema: graphql-js builds the client
// schema from introspection, @graphql-codegen generates a TypeScript client
// for a console's operations, and tsc --strict compiles it.
func TestClientToolchains(t *testing.T) {
	node, err := exec.LookPath("node")
	modules, why := "", "node not found"
	if err == nil {
		modules, why = clientcheckModules(t)
	}
	if modules == "" {
		msg := "CLIENT CHECK NOT RUN (" + why + "): install its modules with sh web/clientcheck/install.sh"
		if os.Getenv("GPUGRAPH_REQUIRE_CLIENTCHECK") == "1" {
			t.Fatal(msg)
		}
		t.Log("\n\n*** " + msg + " ***\n")
		t.Skip(msg)
	}
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
