// Package npmtest finds the npm modules a test runs a Node tool with. Each
// set is pinned by a package-lock.json kept in the repository and installed
// by install.sh into a cache directory outside it, since a test never runs
// npm (that needs a registry). A copy of the lockfile installed with the
// modules tells a current install from one made for another lockfile.
package npmtest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Installed names the copy of the lockfile that install.sh leaves in
// node_modules.
const Installed = ".gpugraph-lock"

// Modules is one pinned set of modules.
type Modules struct {
	What       string // what runs on them, for the skip message: "client check"
	Lockfile   string // their package-lock.json, relative to the test's directory
	Cache      string // their directory under the user cache directory
	DirEnv     string // the variable naming another directory instead
	RequireEnv string // the variable that, set to 1, makes a missing install a failure
	Install    string // the command that installs them
}

// Find answers the node binary and the node_modules directory of m. Without
// them it skips t loudly, saying why and how to install them, or fails it
// where m.RequireEnv is 1 (CI).
func (m Modules) Find(t testing.TB) (node, modules string) {
	t.Helper()
	want, err := os.ReadFile(m.Lockfile)
	if err != nil {
		t.Fatal(err) // the repository's own file
	}
	node, modules, why := m.locate(want)
	if why == "" {
		return node, modules
	}
	msg := m.What + " NOT RUN (" + why + "): install its modules with " + m.Install
	if os.Getenv(m.RequireEnv) == "1" {
		t.Fatal(msg + "; " + m.RequireEnv + "=1 makes this a failure")
	}
	t.Log("\n\n*** " + msg + " ***\n")
	t.Skip(msg)
	return "", ""
}

// locate is Find's answer for the lockfile want, or why there is none.
func (m Modules) locate(want []byte) (node, modules, why string) {
	node, err := exec.LookPath("node")
	if err != nil {
		return "", "", "node not found"
	}
	dir := os.Getenv(m.DirEnv)
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return "", "", err.Error()
		}
		dir = filepath.Join(cache, m.Cache)
	}
	installed, err := os.ReadFile(filepath.Join(dir, "node_modules", Installed))
	if err != nil {
		return "", "", "no modules in " + dir
	}
	if !bytes.Equal(installed, want) {
		return "", "", "the modules in " + dir + " were installed from another " + filepath.Base(m.Lockfile)
	}
	return node, filepath.Join(dir, "node_modules"), ""
}
