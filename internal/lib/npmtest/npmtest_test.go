package npmtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestLocate(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not found: locate answers that first")
	}
	m := Modules{Cache: "gpugraph-npmtest", DirEnv: "GPUGRAPH_NPMTEST_DIR"}
	lock := []byte(`{"lockfileVersion": 3}`)

	dir := t.TempDir()
	t.Setenv("GPUGRAPH_NPMTEST_DIR", dir)
	if _, _, why := m.locate(lock); why != "no modules in "+dir {
		t.Errorf("nothing installed: %q", why)
	}

	if err := os.MkdirAll(filepath.Join(dir, "node_modules"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "node_modules", Installed), []byte(`{"lockfileVersion": 2}`), 0o600); err != nil {
		t.Fatal(err)
	}
	m.Lockfile = "lint/package-lock.json"
	if _, _, why := m.locate(lock); why != "the modules in "+dir+" were installed from another package-lock.json" {
		t.Errorf("installed from another lockfile: %q", why)
	}

	if err := os.WriteFile(filepath.Join(dir, "node_modules", Installed), lock, 0o600); err != nil {
		t.Fatal(err)
	}
	node, modules, why := m.locate(lock)
	if why != "" || modules != filepath.Join(dir, "node_modules") || node == "" {
		t.Errorf("installed from this lockfile: node %q, modules %q, why %q", node, modules, why)
	}

	// Without DirEnv, the user cache directory's Cache.
	cache := t.TempDir()
	t.Setenv("GPUGRAPH_NPMTEST_DIR", "")
	t.Setenv("XDG_CACHE_HOME", cache)
	if _, _, why := m.locate(lock); why != "no modules in "+filepath.Join(cache, "gpugraph-npmtest") {
		t.Errorf("default directory: %q", why)
	}
}
