package peer

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// A Peer is one PostGraphile release measured beside gpugraph: pinned, so
// runs compare, and installed with npm into a cache directory of its own
// outside the repository.
type Peer struct {
	Name    string // as the tables head its column: "v4", "v5"
	Version string // postgraphile's version
	Node    string // the Node.js release it runs on, installed beside it; "" runs the node on PATH
	// idOrder is the orderBy word of the id column: "ID" in v4 (--classic-ids
	// keeps the column's name id for the orderBy enum), "ROW_ID" in v5, whose
	// amber preset names the Relay id id and the column rowId.
	idOrder string
}

// V4 and V5 are the releases measured. PostGraphile 5 needs Node.js 22 or
// later (Promise.withResolvers); it runs on the Node.js release its cache
// directory installs from npm (node-<os>-<arch>), whatever node is on PATH.
var (
	V4 = Peer{Name: "v4", Version: "4.14.1", idOrder: "ID"}
	V5 = Peer{Name: "v5", Version: "5.1.5", Node: "22.23.5", idOrder: "ROW_ID"}
)

// Peers are V4 and V5, by name.
func Peers() []Peer { return []Peer{V4, V5} }

// Label is the peer as a table's column reads: "PostGraphile 4.14.1".
func (p Peer) Label() string { return "PostGraphile " + p.Version }

// ErrNoNPM says PostGraphile is not installed and cannot be: npm is missing.
var ErrNoNPM = errors.New("npm is not installed: the peer figure needs npm (Node.js) to install PostGraphile")

// CacheDir is where p is installed: outside the repository, one directory
// per version.
func (p Peer) CacheDir() (string, error) {
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "gpugraph", "postgraphile-"+p.Version), nil
}

// nodePackage is the npm package that ships Node.js's binary for this
// platform.
func nodePackage() (string, error) {
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	if arch == "" || (runtime.GOOS != "linux" && runtime.GOOS != "darwin") {
		return "", fmt.Errorf("no Node.js package for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	return "node-" + runtime.GOOS + "-" + arch, nil
}

// packages are the npm packages p installs, name → version.
func (p Peer) packages() (map[string]string, error) {
	pk := map[string]string{"postgraphile": p.Version}
	if p.Node != "" {
		n, err := nodePackage()
		if err != nil {
			return nil, err
		}
		pk[n] = p.Node
	}
	return pk, nil
}

// An Installed peer is what its process is started from.
type Installed struct {
	Peer
	Dir  string // its cache directory
	node string // the node binary
	cli  string // PostGraphile's command-line script
}

// Install makes sure dir holds p (npm install, once) and answers how to
// start it. The lock file npm writes records no registry address
// (--omit-lockfile-registry-resolved).
func (p Peer) Install(dir string, log func(string, ...any)) (*Installed, error) {
	pk, err := p.packages()
	if err != nil {
		return nil, err
	}
	in := &Installed{Peer: p, Dir: dir, node: "node", cli: filepath.Join(dir, "node_modules", "postgraphile", "cli.js")}
	if strings.HasPrefix(p.Version, "5.") {
		in.cli = filepath.Join(dir, "node_modules", "postgraphile", "dist", "cli-run.js")
	}
	if p.Node != "" {
		n, _ := nodePackage()
		in.node = filepath.Join(dir, "node_modules", n, "bin", "node")
	}
	if missing := notInstalled(dir, pk); len(missing) > 0 {
		npm, err := exec.LookPath("npm")
		if err != nil {
			return nil, ErrNoNPM
		}
		if p.Node == "" {
			if _, err := exec.LookPath("node"); err != nil {
				return nil, ErrNoNPM
			}
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"private": true}`+"\n"), 0o644); err != nil {
			return nil, err
		}
		log("installing %s into %s", strings.Join(missing, " "), dir)
		args := append([]string{"install", "--no-audit", "--no-fund", "--save-exact", "--omit-lockfile-registry-resolved"}, specs(pk)...)
		cmd := exec.Command(npm, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("npm install %s: %v: %s", strings.Join(specs(pk), " "), err, out)
		}
		if missing := notInstalled(dir, pk); len(missing) > 0 {
			return nil, fmt.Errorf("npm did not install %s", strings.Join(missing, " "))
		}
	}
	if strings.HasPrefix(p.Version, "5.") {
		if err := os.WriteFile(filepath.Join(dir, ConfigV5Name), []byte(ConfigV5), 0o644); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// specs are pk as npm's arguments, name@version, in a fixed order.
func specs(pk map[string]string) []string {
	var s []string
	for n, v := range pk {
		s = append(s, n+"@"+v)
	}
	slices.Sort(s)
	return s
}

// notInstalled lists the name@version of pk that dir's node_modules lacks.
func notInstalled(dir string, pk map[string]string) []string {
	var missing []string
	for _, s := range specs(pk) {
		name, version, _ := strings.Cut(s, "@")
		if installedVersion(dir, name) != version {
			missing = append(missing, s)
		}
	}
	return missing
}

func installedVersion(dir, pkg string) string {
	b, err := os.ReadFile(filepath.Join(dir, "node_modules", pkg, "package.json"))
	if err != nil {
		return ""
	}
	var p struct{ Version string }
	_ = json.Unmarshal(b, &p)
	return p.Version
}

// Command is how the installed peer is started, serving dbURL's public
// schema on host:port, run in a directory holding TagsFile as
// postgraphile.tags.json5: the binary, its arguments and its environment.
func (in *Installed) Command(dbURL, host string, port int) (bin string, args, env []string) {
	env = []string{"NODE_ENV=production"}
	p := fmt.Sprint(port)
	if strings.HasPrefix(in.Version, "5.") {
		return in.node, []string{in.cli, "-C", filepath.Join(in.Dir, ConfigV5Name), "-c", dbURL, "-s", "public", "-n", host, "-p", p}, env
	}
	return in.node, []string{in.cli, "-c", dbURL, "--schema", "public", "--classic-ids", "--host", host, "--port", p,
		"--disable-default-mutations", "--disable-query-log", "--disable-graphiql"}, env
}

// TagsFile is postgraphile.tags.json5, the smart tags PostGraphile needs
// over gpugraph's tables (see the package doc). Both releases read it: v4
// by default, v5 through TagsFilePlugin in ConfigV5.
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

// ConfigV5Name is v5's preset file, written into its cache directory so
// that its imports resolve to the packages installed there.
const ConfigV5Name = "graphile.config.mjs"

// ConfigV5 is PostGraphile 5's preset: amber, the release's recommended
// base, with what v4's flags ask for — the smart tags file read from the
// working directory, no mutations (--disable-default-mutations), no GraphiQL
// and no watch mode — and nothing else: no simplify-inflection, whose names
// would differ from v4's, so one query text serves both but for the id
// column's orderBy word.
const ConfigV5 = `import { PostGraphileAmberPreset } from "postgraphile/presets/amber";
import { TagsFilePlugin } from "postgraphile/utils";

export default {
  extends: [PostGraphileAmberPreset],
  plugins: [TagsFilePlugin],
  disablePlugins: ["PgMutationCreatePlugin", "PgMutationUpdateDeletePlugin"],
  grafserv: { graphiql: false, watch: false },
  grafast: { explain: false },
};
`
