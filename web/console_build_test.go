package web_test

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"gpugraph/internal/lib/npmtest"
)

// consoleModules are the console's pinned modules, installed by
// console/install.sh (codegen, tsc, esbuild, axe-core among them).
var consoleModules = npmtest.Modules{
	What:       "CONSOLE BUILD CHECK",
	Lockfile:   "console/package-lock.json",
	Cache:      "gpugraph-console",
	DirEnv:     "GPUGRAPH_CONSOLE_DIR",
	RequireEnv: "GPUGRAPH_REQUIRE_CONSOLE",
	Install:    "sh web/console/install.sh",
}

// The console's committed build is what its sources make today: the typed
// operations regenerated from schema.graphqls are the committed src/gql
// (so a schema change that breaks an operation fails here, in codegen or
// in tsc), the sources type-check, and the bundle rebuilt is
// web/dist/console byte for byte. A difference means: run make console
// and commit what it changed.
func TestConsoleBuildIsCurrent(t *testing.T) {
	node, modules := consoleModules.Find(t)
	root := t.TempDir()
	work := filepath.Join(root, "web", "console")
	copyTree(t, "console", work)
	schema, err := os.ReadFile(filepath.Join("..", "schema.graphqls"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "schema.graphqls"), schema, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(modules, filepath.Join(work, "node_modules")); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(root, "web", "dist", "console")
	cmd := exec.Command("sh", "generate.sh", out)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "FORCE_COLOR=0", "PATH="+filepath.Dir(node)+string(os.PathListSeparator)+os.Getenv("PATH"))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("codegen, tsc --noEmit and the bundle (web/console/generate.sh): %v\n%s", err, b)
	} else {
		t.Logf("%s", b)
	}
	sameTree(t, filepath.Join(work, "src", "gql"), filepath.Join("console", "src", "gql"),
		"the typed operations generated from schema.graphqls differ from web/console/src/gql: run make console and commit")
	sameTree(t, out, filepath.Join("dist", "console"),
		"the bundle built from web/console differs from web/dist/console: run make console and commit")
}

// copyTree copies the regular files under src (but node_modules) to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "node_modules" {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// sameTree fails t with why unless the files under got and want are the
// same names and bytes.
func sameTree(t *testing.T, got, want, why string) {
	t.Helper()
	files := func(dir string) map[string][]byte {
		m := map[string][]byte{}
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			m[rel] = b
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	g, w := files(got), files(want)
	for name, b := range w {
		if gb, ok := g[name]; !ok {
			t.Errorf("%s: %s is not made any more", why, name)
		} else if !bytes.Equal(gb, b) {
			t.Errorf("%s: %s (%d bytes built, %d committed)", why, name, len(gb), len(b))
		}
	}
	for name := range g {
		if _, ok := w[name]; !ok {
			t.Errorf("%s: %s is new", why, name)
		}
	}
}
