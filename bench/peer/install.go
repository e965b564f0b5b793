package peer

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Version is the PostGraphile release measured: pinned, so runs compare.
const Version = "4.14.1"

// ErrNoNPM says PostGraphile is not installed and cannot be: npm is missing.
var ErrNoNPM = errors.New("npm is not installed: the peer figure needs npm (Node.js) to install PostGraphile " + Version)

// CacheDir is where PostGraphile is installed: outside the repository, one
// directory per version.
func CacheDir() (string, error) {
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "gpugraph", "postgraphile-"+Version), nil
}

// Install makes sure dir holds PostGraphile Version (npm install, once) and
// answers the path of its command-line script.
func Install(dir string, log func(string, ...any)) (string, error) {
	cli := filepath.Join(dir, "node_modules", "postgraphile", "cli.js")
	if installedVersion(dir) == Version {
		return cli, nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", ErrNoNPM
	}
	if _, err := exec.LookPath("node"); err != nil {
		return "", ErrNoNPM
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"private": true}`+"\n"), 0o644); err != nil {
		return "", err
	}
	log("installing postgraphile@%s into %s", Version, dir)
	cmd := exec.Command(npm, "install", "--no-audit", "--no-fund", "--save-exact", "postgraphile@"+Version)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("npm install postgraphile@%s: %v: %s", Version, err, out)
	}
	if v := installedVersion(dir); v != Version {
		return "", fmt.Errorf("npm installed postgraphile %q, want %s", v, Version)
	}
	return cli, nil
}

func installedVersion(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "node_modules", "postgraphile", "package.json"))
	if err != nil {
		return ""
	}
	var p struct{ Version string }
	_ = json.Unmarshal(b, &p)
	return p.Version
}

// TagsFile is postgraphile.tags.json5, the smart tags PostGraphile needs
// over gpugraph's tables (see the package doc).
const TagsFile = `{
  version: 1,
  config: {
    class: {
      // Type "Node" belongs to Relay's Node interface.
      nodes: { tags: { name: "fleet_node", unique: "cluster_id,name" } },
      // A pod names its node by cluster and name; there is no foreign key.
      pods: { tags: { foreignKey: "(cluster_id, node_name) references nodes (cluster_id, name)" } },
    },
  },
}
`
