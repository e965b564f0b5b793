package openapi

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gpugraph/internal/lib/npmtest"
)

// linter is Redocly's CLI, pinned by lint/package-lock.json and installed
// by lint/install.sh.
var linter = npmtest.Modules{
	What:       "OPENAPI LINT",
	Lockfile:   "lint/package-lock.json",
	Cache:      "gpugraph-openapi-lint",
	DirEnv:     "GPUGRAPH_OPENAPI_LINT_DIR",
	RequireEnv: "GPUGRAPH_REQUIRE_OPENAPI_LINT",
	Install:    "sh internal/httpapi/rest/openapi/lint/install.sh",
}

// lint runs `redocly lint` on doc under lint/redocly.yaml and its ignore
// file, and answers its exit error and output.
func lint(t *testing.T, node, modules string, doc []byte) (error, string) {
	t.Helper()
	work := t.TempDir()
	// Indented, so each problem names a line of its own.
	var indented bytes.Buffer
	if err := json.Indent(&indented, doc, "", " "); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"openapi.json": indented.Bytes()}
	for from, to := range map[string]string{"lint/redocly.yaml": "redocly.yaml", "lint/lint-ignore.yaml": ".redocly.lint-ignore.yaml"} {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		files[to] = b
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(work, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(node, filepath.Join(modules, "@redocly", "cli", "bin", "cli.js"),
		"lint", "--config", "redocly.yaml", "--format", "stylish", "openapi.json")
	cmd.Dir = work
	// Offline and quiet: no usage report, no update check, no colours.
	cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true", "REDOCLY_SUPPRESS_NOTIFICATIONS=true", "NO_COLOR=1", "FORCE_COLOR=0")
	out, err := cmd.CombinedOutput()
	return err, string(out)
}

// TestDocumentLint lints the served document with a real OpenAPI linter,
// Redocly's CLI, every rule of its recommended set an error
// (lint/redocly.yaml); the problems kept by design are ignored one by one,
// with their reasons, in lint/lint-ignore.yaml. A document the rules
// refuse fails it, so the configuration is seen to bite.
func TestDocumentLint(t *testing.T) {
	node, modules := linter.Find(t)
	if err, out := lint(t, node, modules, Document()); err != nil {
		t.Fatalf("redocly lint of the served document: %v\n%s", err, out)
	}

	var broken map[string]any
	if err := json.Unmarshal(Document(), &broken); err != nil {
		t.Fatal(err)
	}
	delete(broken, "servers")
	restart := object(object(object(broken["paths"])["/v1/vms/{id}/restart"])["post"])
	delete(restart, "operationId")
	delete(object(restart["responses"]), "400") // still has 4XX answers
	object(object(object(broken["paths"])["/healthz"])["get"])["tags"] = []any{"Health"}
	b, err := json.Marshal(broken)
	if err != nil {
		t.Fatal(err)
	}
	err, out := lint(t, node, modules, b)
	if err == nil {
		t.Fatalf("redocly lint passed a document with no servers, an operation without an id and an undeclared tag:\n%s", out)
	}
	for _, rule := range []string{"no-empty-servers", "operation-operationId", "operation-tag-defined"} {
		if !strings.Contains(out, rule) {
			t.Errorf("the lint did not report %s:\n%s", rule, out)
		}
	}
}
