package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/auth"
	"gpugraph/internal/services/clustersync"
	"gpugraph/internal/services/nodeid"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// runAdmin runs one administration command against dbURL.
func runAdmin(t *testing.T, dbURL string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	err = admin(context.Background(), append(args, "--database-url", dbURL), &out, &errb)
	return out.String(), errb.String(), err
}

func mustAdmin(t *testing.T, dbURL string, args ...string) string {
	t.Helper()
	out, errOut, err := runAdmin(t, dbURL, args...)
	if err != nil {
		t.Fatalf("gpugraph %s: %v (%s)", strings.Join(args, " "), err, errOut)
	}
	return out
}

// Bootstrapping a fresh database from the command line: an organization,
// its first admin key, an application; listing; revoking.
func TestAdminCommands(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(string(engine), func(t *testing.T) {
			url := storetest.URL(t, engine)
			if out := mustAdmin(t, url, "orgs", "create", "--id", "org-a", "--name", "Acme", "--tenant-id", "1001", "--infiniband"); out != "created organization org-a (Acme), tenant 1001\n" {
				t.Fatalf("orgs create: %q", out)
			}
			secret := strings.TrimSpace(mustAdmin(t, url, "keys", "create", "--org", "org-a", "--permissions", "admin,workloads.read",
				"--expires", "90d", "--name", "bootstrap"))
			if !strings.HasPrefix(secret, "gpgkey_") || strings.Contains(secret, "\n") {
				t.Fatalf("keys create printed %q", secret)
			}
			st, err := store.Open(url)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			authn := &auth.Authenticator{Store: st}
			c, err := authn.Lookup(context.Background(), secret)
			if err != nil || c.OrganizationID != "org-a" || !c.Can(auth.Admin) || !c.Can(auth.WorkloadsRead) || c.Can(auth.ComputeRead) {
				t.Fatalf("the new key: %+v, %v", c, err)
			}
			authn.WaitUsage()

			list := mustAdmin(t, url, "keys", "list")
			lines := strings.Split(strings.TrimSpace(list), "\n")
			if len(lines) != 2 || !strings.HasPrefix(lines[0], "ID") || !strings.Contains(lines[1], "org-a") ||
				!strings.Contains(lines[1], "bootstrap") || !strings.Contains(lines[1], "admin,workloads.read") || strings.Contains(list, secret) {
				t.Fatalf("keys list:\n%s", list)
			}
			id := strings.Fields(lines[1])[0]
			if id != c.KeyID {
				t.Fatalf("listed id %s, key id %s", id, c.KeyID)
			}

			app := mustAdmin(t, url, "apps", "create", "--org", "org-a", "--permissions", "workloads.read", "--name", "runapy")
			var clientID, clientSecret string
			for _, line := range strings.Split(strings.TrimSpace(app), "\n") {
				if v, ok := strings.CutPrefix(line, "clientId "); ok {
					clientID = v
				}
				if v, ok := strings.CutPrefix(line, "clientSecret "); ok {
					clientSecret = v
				}
			}
			if !strings.HasPrefix(clientID, "app-") || !strings.HasPrefix(clientSecret, "gpgapp_") {
				t.Fatalf("apps create printed %q", app)
			}
			if apps := mustAdmin(t, url, "apps", "list", "--org", "org-a"); !strings.Contains(apps, clientID) || strings.Contains(apps, clientSecret) {
				t.Fatalf("apps list:\n%s", apps)
			}
			if out := mustAdmin(t, url, "apps", "revoke", clientID); !strings.HasPrefix(out, "revoked "+clientID+" at ") {
				t.Fatalf("apps revoke: %q", out)
			}

			if out := mustAdmin(t, url, "keys", "revoke", id); !strings.HasPrefix(out, "revoked "+id+" at ") {
				t.Fatalf("keys revoke: %q", out)
			}
			if _, err := authn.Lookup(context.Background(), secret); err == nil || !strings.HasPrefix(err.Error(), "API key revoked at ") {
				t.Fatalf("revoked key: %v", err)
			}
			// By the key itself, as KEY=$(gpugraph keys create …) holds it.
			second := strings.TrimSpace(mustAdmin(t, url, "keys", "create", "--org", "org-a", "--permissions", "workloads.read"))
			c2, err := authn.Lookup(context.Background(), second)
			if err != nil {
				t.Fatal(err)
			}
			authn.WaitUsage()
			if out := mustAdmin(t, url, "keys", "revoke", second); !strings.HasPrefix(out, "revoked "+c2.KeyID+" at ") {
				t.Fatalf("keys revoke KEY: %q", out)
			}
			if _, err := authn.Lookup(context.Background(), second); err == nil || !strings.HasPrefix(err.Error(), "API key revoked at ") {
				t.Fatalf("key revoked by itself: %v", err)
			}
			if out := mustAdmin(t, url, "orgs", "list"); out != "ID     NAME  TENANT  INFINIBAND  STATE\norg-a  Acme  1001    true        active\n" {
				t.Fatalf("orgs list:\n%q", out)
			}

			for _, c := range []struct {
				args []string
				want string
			}{
				{[]string{"keys", "create", "--permissions", "admin"},
					"gpugraph keys create needs --org ORG (gpugraph orgs list shows them)\nusage: gpugraph keys create --org ORG --permissions a,b [--expires 90d] [--name NAME]"},
				{[]string{"keys", "create", "--org", "org-nope", "--permissions", "admin"},
					"organization org-nope not found; known organizations: org-a (Acme); gpugraph orgs list lists them all"},
				{[]string{"apps", "create", "--org", "a", "--permissions", "admin"},
					"organization a not found; did you mean org-a (Acme)? gpugraph orgs list lists them all"},
				{[]string{"keys", "list", "--org", "acme"},
					"organization acme not found; did you mean org-a (Acme)? gpugraph orgs list lists them all"},
				{[]string{"keys", "revoke"}, "gpugraph keys revoke needs one ID|KEY\nusage: gpugraph keys revoke ID|KEY"},
				{[]string{"keys", "list", "--tenant-id", "3"},
					"flag provided but not defined: -tenant-id\nusage: gpugraph keys list [--org ORG] (gpugraph keys list --help says more)"},
				{[]string{"keys", "create", "--org", "org-a", "--permissions", "root"}, `permission "root" is not one of compute.read, compute.operate, workloads.read, billing.read, metrics.write, nodes.report, nodes.admin, admin`},
				{[]string{"keys", "revoke", "nope"}, "API key nope not found"},
				{[]string{"orgs", "create", "--id", "org-a", "--name", "Acme", "--tenant-id", "1001"}, "organization org-a exists already"},
				{[]string{"orgs", "create", "--id", "org-b", "--name", "Evil", "--tenant-id", "1001"},
					"Run:ai tenant 1001 is held by organization org-a (Acme): a tenant's pods are read by one organization's keys; give org-b a tenant of its own"},
			} {
				if _, _, err := runAdmin(t, url, c.args...); err == nil || err.Error() != c.want {
					t.Errorf("gpugraph %s: %v, want %q", strings.Join(c.args, " "), err, c.want)
				}
			}
		})
	}
}

// The subcommands leave the server's command line alone: run dispatches
// on the first word only.
func TestAdminDispatch(t *testing.T) {
	url := storetest.URL(t, store.SQLite)
	err := run(context.Background(), []string{"keys", "frobnicate", "--database-url", url})
	if err == nil || !strings.HasPrefix(err.Error(), "unknown command gpugraph keys frobnicate") {
		t.Fatalf("err = %v", err)
	}
}

// When the demo loads (contract §2): by default on SQLite, the embedded
// default; on PostgreSQL only when --demo is given.
func TestDemoDefaults(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	for _, c := range []struct {
		args []string
		want bool
	}{
		{nil, true},
		{[]string{"--database-url", "sqlite:x.db"}, true},
		{[]string{"--demo=false"}, false},
		{[]string{"--database-url", "postgres://db/x"}, false},
		{[]string{"--database-url", "postgresql://db/x"}, false},
		{[]string{"--database-url", "postgres://db/x", "--demo"}, true},
		{[]string{"--database-url", "postgres://db/x", "--demo=true"}, true},
		{[]string{"--database-url", "postgres://db/x", "--demo=false"}, false},
	} {
		o, err := parseFlags(c.args)
		if err != nil || o.demo != c.want {
			t.Errorf("%v: demo %v, %v; want %v", c.args, o.demo, err, c.want)
		}
	}
	t.Setenv("DATABASE_URL", "postgres://db/x")
	if o, _ := parseFlags(nil); o.demo {
		t.Error("DATABASE_URL=postgres://… loads the demo without --demo")
	}
	t.Setenv("DATABASE_URL", "")
	if _, err := parseFlags([]string{"--token-signing-key", "short"}); err == nil || err.Error() != "--token-signing-key has 5 bytes; it needs at least 32" {
		t.Errorf("short signing key: %v", err)
	}
}

// A fresh PostgreSQL gets no demo (and so no usable key) unless --demo is
// given; with it, the demo's organizations are there.
func TestPostgresDemoOnlyWhenAsked(t *testing.T) {
	for _, c := range []struct {
		args      []string
		wantEmpty bool
	}{{nil, true}, {[]string{"--demo"}, false}} {
		url := storetest.URL(t, store.Postgres)
		ctx, cancel := context.WithCancel(context.Background())
		addr := freeAddr(t)
		done := make(chan error, 1)
		go func() { done <- run(ctx, append([]string{"--addr", addr, "--database-url", url}, c.args...)) }()
		st, err := store.Open(url)
		if err != nil {
			t.Fatal(err)
		}
		var up bool
		for i := 0; i < 600 && !up; i++ {
			resp, err := http.Get("http://" + addr + "/healthz")
			if err == nil {
				resp.Body.Close()
				up = true
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if !up {
			t.Fatal("server never answered")
		}
		empty, err := st.Empty(context.Background())
		// The demo's admin key comes once the server listens.
		for i := 0; i < 600 && !c.wantEmpty && demoAdminKeys(t, st) == 0; i++ {
			time.Sleep(50 * time.Millisecond)
		}
		cancel()
		if rerr := <-done; rerr != nil {
			t.Fatalf("run: %v", rerr)
		}
		if err != nil || empty != c.wantEmpty {
			t.Errorf("%v: empty %v (%v), want %v", c.args, empty, err, c.wantEmpty)
		}
		// A production start (no --demo) gets no admin key; the demo one.
		if n, want := demoAdminKeys(t, st), map[bool]int{false: 1}[c.wantEmpty]; n != want {
			t.Errorf("%v: %d demo admin keys, want %d", c.args, n, want)
		}
		st.Close()
	}
}

// gpugraph nodes enroll: the operator's enrollment without any key, its
// one-time bootstrap token alone on stdout, which the agent exchanges.
func TestNodesEnrollCommand(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(string(engine), func(t *testing.T) {
			url := storetest.URL(t, engine)
			out, errOut, err := runAdmin(t, url, "nodes", "enroll", "--node-name", "lab-1", "--cluster-id", "c1")
			token := strings.TrimSuffix(out, "\n")
			if err != nil || !strings.HasPrefix(token, agentapi.BootstrapTokenPrefix) || strings.Contains(token, "\n") {
				t.Fatalf("nodes enroll: %q, %v (%s)", out, err, errOut)
			}
			if !strings.HasPrefix(errOut, "enrolled node lab-1 of cluster c1: its agent exchanges this one-time bootstrap token (--bootstrap-token) before ") {
				t.Errorf("nodes enroll said %q", errOut)
			}
			st, err := store.Open(url)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			cred, err := nodeid.New(st).Register(context.Background(), token)
			if err != nil || cred.NodeName != "lab-1" || cred.ClusterID != "c1" || !nodeid.IsCredential(cred.Credential) {
				t.Fatalf("exchanging the token: %+v, %v", cred, err)
			}
			for _, c := range []struct {
				args []string
				want string
			}{
				{[]string{"nodes", "enroll", "--cluster-id", "c1"}, `nodeName "" must be 1 to 253 bytes of printable UTF-8 without spaces`},
				{[]string{"nodes", "enroll", "--node-name", "lab-1"}, `clusterId "" must be 1 to 253 bytes of printable UTF-8 without spaces`},
				{[]string{"nodes", "list"}, "unknown command gpugraph nodes list\n" + adminUsage},
			} {
				if _, _, err := runAdmin(t, url, c.args...); err == nil || err.Error() != c.want {
					t.Errorf("gpugraph %s: %v, want %q", strings.Join(c.args, " "), err, c.want)
				}
			}
		})
	}
}

// An unknown organization's error names the one meant, or up to three
// known ones and how many more, or says there is none yet.
func TestAdminUnknownOrganization(t *testing.T) {
	url := storetest.URL(t, store.SQLite)
	create := []string{"keys", "create", "--org", "acme", "--permissions", "admin"}
	if _, _, err := runAdmin(t, url, create...); err == nil ||
		err.Error() != "organization acme not found; there is no organization yet: gpugraph orgs create --id ID --name NAME --tenant-id N makes one" {
		t.Errorf("no organization: %v", err)
	}
	for i, name := range []string{"Delta", "Alpha", "Gamma", "Beta"} {
		mustAdmin(t, url, "orgs", "create", "--id", "org-"+strings.ToLower(name), "--name", name, "--tenant-id", fmt.Sprint(1001+i))
	}
	if _, _, err := runAdmin(t, url, create...); err == nil ||
		err.Error() != "organization acme not found; known organizations: org-alpha (Alpha), org-beta (Beta), org-delta (Delta) and 1 more; gpugraph orgs list lists them all" {
		t.Errorf("four organizations: %v", err)
	}
	create[3] = "gamma"
	if _, _, err := runAdmin(t, url, create...); err == nil ||
		err.Error() != "organization gamma not found; did you mean org-gamma (Gamma)? gpugraph orgs list lists them all" {
		t.Errorf("an id without its prefix: %v", err)
	}
}

// --help at every level prints to stdout and succeeds: a command's verbs,
// a verb's synopsis and its own flags only.
func TestAdminHelp(t *testing.T) {
	url := storetest.URL(t, store.SQLite)
	for _, args := range [][]string{{"apps", "--help"}, {"apps", "-h"}, {"apps", "help"}} {
		out, errOut, err := runAdmin(t, url, args...)
		if err != nil || errOut != "" || !strings.HasPrefix(out, "usage of gpugraph apps:\n  gpugraph apps create --org ORG --permissions a,b [--expires 90d] [--name NAME]\n      make an application") ||
			!strings.Contains(out, "\n  gpugraph apps list [--org ORG]\n") || !strings.Contains(out, "\n  gpugraph apps revoke CLIENT_ID\n") || strings.Contains(out, "keys") {
			t.Errorf("gpugraph %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
		}
	}
	out, _, err := runAdmin(t, url, "apps", "create", "--help")
	if err != nil || !strings.HasPrefix(out, "usage: gpugraph apps create --org ORG --permissions a,b [--expires 90d] [--name NAME]\n\nmake an application") {
		t.Errorf("apps create --help: %v\n%s", err, out)
	}
	for _, flag := range []string{"-database-url URL", "-org ORG", "-permissions a,b", "-expires 90d", "-name NAME"} {
		if !strings.Contains(out, "  "+flag+"\n") {
			t.Errorf("apps create --help lacks %s:\n%s", flag, out)
		}
	}
	if strings.Contains(out, "-tenant-id") || strings.Contains(out, "-node-name") {
		t.Errorf("apps create --help lists other commands' flags:\n%s", out)
	}
	if out, _, err := runAdmin(t, url, "orgs", "list", "-h"); err != nil || !strings.HasPrefix(out, "usage: gpugraph orgs list\n\nlist organizations") {
		t.Errorf("orgs list -h: %v\n%s", err, out)
	}
	if _, _, err := runAdmin(t, url, "orgs"); err == nil || !strings.HasPrefix(err.Error(), "gpugraph orgs needs a command\nusage of gpugraph orgs:\n  gpugraph orgs create") {
		t.Errorf("orgs alone: %v", err)
	}
}

// gpugraph --help (and gpugraph help) lists the commands before the
// server's flags; help COMMAND [VERB] is COMMAND [VERB] --help; a word that
// is no command is refused, not taken for the server's start.
func TestServerHelp(t *testing.T) {
	var b bytes.Buffer
	helpOutput = &b
	t.Cleanup(func() { helpOutput = os.Stdout })
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		b.Reset()
		if err := run(context.Background(), args); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		out := b.String()
		cmds, flags, ok := strings.Cut(out, "\nserver flags:\n")
		if !ok || !strings.Contains(cmds, "\ncommands:\n  keys create|list|revoke  API keys\n") ||
			!strings.Contains(cmds, "\n  orgs create|list         organizations\n") ||
			!strings.Contains(cmds, "\n  nodes enroll             node enrollment") ||
			!strings.Contains(flags, "  -addr string\n") || !strings.Contains(flags, "  -log-format string\n") {
			t.Errorf("%v:\n%s", args, out)
		}
	}
	b.Reset()
	if err := run(context.Background(), []string{"help", "keys", "revoke"}); err != nil || !strings.HasPrefix(b.String(), "usage: gpugraph keys revoke ID|KEY\n") {
		t.Errorf("help keys revoke: %v\n%s", err, b.String())
	}
	b.Reset()
	if err := run(context.Background(), []string{"help", "orgs"}); err != nil || !strings.HasPrefix(b.String(), "usage of gpugraph orgs:\n") {
		t.Errorf("help orgs: %v\n%s", err, b.String())
	}
	for args, want := range map[string]string{
		"org list":         `unknown command "org": the commands are keys, apps, orgs, signing-key, nodes, clusters, billing (gpugraph --help says more)`,
		"help frobnicate":  `unknown command "frobnicate": the commands are keys, apps, orgs, signing-key, nodes, clusters, billing (gpugraph --help says more)`,
		"--adr :9090":      "flag provided but not defined: -adr (gpugraph --help lists the flags and commands)",
		"--log-format=xml": `--log-format "xml": want auto, text or json`,
		"--log-level=loud": `--log-level "loud": want debug, info, warn or error`,
	} {
		if err := run(context.Background(), strings.Fields(args)); err == nil || err.Error() != want {
			t.Errorf("gpugraph %s: %v, want %q", args, err, want)
		}
	}
}

// demoAdminKeys counts the demo's admin keys that stand.
func demoAdminKeys(t *testing.T, st *store.Store) int {
	t.Helper()
	keys, err := st.ListCredentials(context.Background(), store.KindAPIKey, "")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, k := range keys {
		if k.Name == demoAdminName && k.RevokedAt == nil {
			n++
		}
	}
	return n
}

// gpugraph clusters enroll / revoke: the cluster's credential alone on
// stdout, bound to the cluster and tenant; revoked, it is refused.
func TestClustersEnrollCommand(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(string(engine), func(t *testing.T) {
			url := storetest.URL(t, engine)
			if _, _, err := runAdmin(t, url, "orgs", "create", "--id", "lab", "--name", "Lab", "--tenant-id", "1099"); err != nil {
				t.Fatal(err)
			}
			const id = "3f2a7c1e-0b4d-4c5e-9f60-7a8b9c0d1e2f"
			out, errOut, err := runAdmin(t, url, "clusters", "enroll", "--cluster-id", id, "--tenant-id", "1099")
			cred := strings.TrimSuffix(out, "\n")
			if err != nil || !clustersync.IsCredential(cred) || strings.Contains(cred, "\n") {
				t.Fatalf("clusters enroll: %q, %v (%s)", out, err, errOut)
			}
			if !strings.HasPrefix(errOut, "enrolled cluster "+id+" for tenant 1099: its connector sends this credential") {
				t.Errorf("clusters enroll said %q", errOut)
			}
			st, err := store.Open(url)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			svc := clustersync.New(st)
			if who, err := svc.Authenticate(context.Background(), cred); err != nil || who.ClusterID != id || who.TenantID != 1099 {
				t.Fatalf("the credential: %+v, %v", who, err)
			}
			if out, _, err := runAdmin(t, url, "clusters", "revoke", id); err != nil || out != "revoked cluster "+id+"'s credential; the pods it reported stay\n" {
				t.Fatalf("clusters revoke: %q, %v", out, err)
			}
			if _, err := svc.Authenticate(context.Background(), cred); err == nil {
				t.Errorf("a revoked credential still authenticates")
			}
			for _, c := range []struct {
				args []string
				want string
			}{
				{[]string{"clusters", "enroll", "--cluster-id", "c1", "--tenant-id", "1099"}, `clusterId "c1" must be a UUID (8-4-4-4-12 hex digits), as Run:ai's cluster ids are: the Pods API answers it as one`},
				{[]string{"clusters", "enroll", "--cluster-id", id, "--tenant-id", "7"}, "tenantId 7 is no organization's tenant"},
				{[]string{"clusters", "revoke", id}, `cluster "` + id + `" has no credential`},
				{[]string{"clusters", "revoke"}, "gpugraph clusters revoke needs one CLUSTER_ID\nusage: gpugraph clusters revoke CLUSTER_ID"},
			} {
				if _, _, err := runAdmin(t, url, c.args...); err == nil || err.Error() != c.want {
					t.Errorf("gpugraph %s: %v, want %q", strings.Join(c.args, " "), err, c.want)
				}
			}

			// A cluster id in upper case is the same cluster, kept in lower case.
			upper := strings.ToUpper(id)
			if _, errOut, err := runAdmin(t, url, "clusters", "enroll", "--cluster-id", upper, "--tenant-id", "1099"); err != nil ||
				!strings.HasPrefix(errOut, "enrolled cluster "+id+" for tenant 1099") {
				t.Errorf("clusters enroll in upper case: %q, %v", errOut, err)
			}
			if _, _, err := runAdmin(t, url, "orgs", "create", "--id", "lab2", "--name", "Lab 2", "--tenant-id", "1100"); err != nil {
				t.Fatal(err)
			}
			_, _, err = runAdmin(t, url, "clusters", "enroll", "--cluster-id", upper, "--tenant-id", "1100")
			if want := `cluster "` + id + `" is enrolled for another tenant`; err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("clusters enroll in upper case for another tenant: %v, want %q…", err, want)
			}
			if out, _, err := runAdmin(t, url, "clusters", "revoke", upper); err != nil || out != "revoked cluster "+id+"'s credential; the pods it reported stay\n" {
				t.Errorf("clusters revoke in upper case: %q, %v", out, err)
			}
		})
	}
}
