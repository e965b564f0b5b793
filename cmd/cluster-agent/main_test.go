package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"gpugraph/internal/cluster/clusterconnector"
	"gpugraph/internal/cluster/kubetest"
)

func env(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }

const cluster = "cccccccc-0000-4000-8000-0000000000c1"

func TestParseFlags(t *testing.T) {
	var stderr bytes.Buffer
	o, err := parseFlags([]string{"--server", "https://gpugraph.example.com", "--cluster-id", cluster, "--credential-file", "/run/cred",
		"--kubeconfig", "/kc", "--namespace", "team-a", "--batch-pods", "50", "--flush-after", "1s", "--resync", "5m", "--log-level", "debug",
		"--project-label", "example.com/project", "--node-pool-label", "example.com/pool", "--gpu-resource", "amd.com/gpu"}, env(nil), &stderr)
	if err != nil {
		t.Fatal(err)
	}
	c := o.cfg
	got := fmt.Sprintln(c.Server, c.ClusterID, o.credFile, o.kubeconfig, c.Namespace, c.BatchPods, c.FlushAfter, c.Resync, o.logLevel,
		c.Conventions.ProjectLabel, c.Conventions.NodePoolLabel, c.Conventions.GPUResource, c.Conventions.TaskLabel)
	if want := "https://gpugraph.example.com " + cluster + " /run/cred /kc team-a 50 1s 5m0s debug example.com/project example.com/pool amd.com/gpu training.kubeflow.org/replica-type\n"; got != want {
		t.Errorf("parsed %s, want %s", got, want)
	}

	// The defaults, the credential from the environment.
	o, err = parseFlags([]string{"--server", "http://gp", "--cluster-id", cluster}, env(map[string]string{credentialEnv: "gpgcl_env"}), &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if c := o.cfg; c.BatchPods != clusterconnector.DefaultBatchPods || c.FlushAfter != clusterconnector.DefaultFlushAfter ||
		c.Resync != clusterconnector.DefaultResync || o.logLevel != "info" || c.Conventions != clusterconnector.RunaiConventions() || c.Namespace != "" {
		t.Errorf("defaults: %+v %q", c, o.logLevel)
	}
	if cred, err := o.credential(); cred != "gpgcl_env" || err != nil {
		t.Errorf("the credential from the environment: %q %v", cred, err)
	}
	if stderr.Len() != 0 {
		t.Errorf("parsing wrote %q", stderr.String())
	}
}

func TestParseFlagsRefusesBadInput(t *testing.T) {
	withCred := env(map[string]string{credentialEnv: "gpgcl_x"})
	for _, c := range []struct {
		args []string
		env  func(string) string
		want string
	}{
		{[]string{"--cluster-id", cluster}, withCred, "--server is required: gpugraph's base URL"},
		{[]string{"--server", "http://gp"}, withCred, "--cluster-id is required: the cluster's UUID, as enrolled with gpugraph clusters enroll"},
		{[]string{"--server", "http://gp", "--cluster-id", cluster}, env(nil),
			"no credential: give --credential-file FILE (a mounted Secret) or set GPUGRAPH_CLUSTER_CREDENTIAL; gpugraph clusters enroll --cluster-id ID --tenant-id N prints it"},
		{[]string{"--server", "http://gp", "--cluster-id", cluster, "gpgcl_x"}, withCred, `unexpected argument "gpgcl_x"`},
		{[]string{"--credential", "gpgcl_x"}, withCred, "flag provided but not defined: -credential"},
		{[]string{"--batch-pods", "many"}, withCred, `invalid value "many" for flag -batch-pods: parse error`},
		{[]string{"--resync", "30"}, withCred, `invalid value "30" for flag -resync: parse error`},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			if o, err := parseFlags(c.args, c.env, &bytes.Buffer{}); o != nil || err == nil || err.Error() != c.want {
				t.Errorf("parseFlags answered %v, %v; want %s", o, err, c.want)
			}
		})
	}
	var usage bytes.Buffer
	if _, err := parseFlags([]string{"-h"}, env(nil), &usage); !errors.Is(err, flag.ErrHelp) || !strings.Contains(usage.String(), "-credential-file FILE") {
		t.Errorf("-h answered %v and printed %q", err, usage.String())
	}
}

// The credential file is read at each call: a rotated Secret is picked up.
func TestCredentialIsReadEachTime(t *testing.T) {
	path := filepath.Join(t.TempDir(), "credential")
	o := &options{credFile: path, getenv: env(map[string]string{credentialEnv: "gpgcl_env"})}
	for _, c := range []struct{ content, want, err string }{
		{"gpgcl_one\n", "gpgcl_one", ""},
		{"  gpgcl_two  ", "gpgcl_two", ""},
		{"\n", "", path + " is empty"},
	} {
		if err := os.WriteFile(path, []byte(c.content), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := o.credential()
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if got != c.want || gotErr != c.err {
			t.Errorf("credential of %q: %q %q, want %q %q", c.content, got, gotErr, c.want, c.err)
		}
	}
}

func TestRunRefusesBadInput(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "") // not in a cluster
	dir := t.TempDir()
	kubeconfig, cred, empty := filepath.Join(dir, "kubeconfig"), filepath.Join(dir, "cred"), filepath.Join(dir, "empty")
	if err := kubetest.WriteKubeconfig(kubeconfig, &rest.Config{Host: "https://127.0.0.1:1", BearerToken: "t"}); err != nil {
		t.Fatal(err)
	}
	for p, s := range map[string]string{cred: "gpgcl_file\n", empty: ""} {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	base := []string{"--cluster-id", cluster, "--credential-file", cred, "--kubeconfig", kubeconfig}
	for _, c := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"log level", append([]string{"--server", "http://gp", "--log-level", "loud"}, base...), nil, `--log-level "loud": debug, info, warn or error`},
		{"no credential file", []string{"--server", "http://gp", "--cluster-id", cluster, "--credential-file", filepath.Join(dir, "none"), "--kubeconfig", kubeconfig}, nil,
			"the cluster credential: open " + filepath.Join(dir, "none") + ": no such file or directory"},
		{"empty credential file", []string{"--server", "http://gp", "--cluster-id", cluster, "--credential-file", empty, "--kubeconfig", kubeconfig}, nil,
			"the cluster credential: " + empty + " is empty"},
		{"no kubeconfig", []string{"--server", "http://gp", "--cluster-id", cluster, "--credential-file", cred}, nil,
			"not in a cluster, and neither --kubeconfig nor $KUBECONFIG names a kubeconfig"},
		{"kubeconfig missing", []string{"--server", "http://gp", "--cluster-id", cluster, "--credential-file", cred}, map[string]string{"KUBECONFIG": filepath.Join(dir, "kc")},
			"stat " + filepath.Join(dir, "kc") + ": no such file or directory"},
		{"server not http", append([]string{"--server", "gpugraph.example.com"}, base...), nil, `server "gpugraph.example.com" is not an http(s) URL`},
		{"batch too large", append([]string{"--server", "http://gp", "--batch-pods", "5001"}, base...), nil, "a batch holds at most 5000 pods, not 5001"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := run(context.Background(), c.args, env(c.env), &bytes.Buffer{}); err == nil || err.Error() != c.want {
				t.Errorf("run answered %v, want %s", err, c.want)
			}
		})
	}

	// Well configured, run starts the connector, which ends with ctx.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var log bytes.Buffer
	if err := run(ctx, append([]string{"--server", "http://gp"}, base...), env(map[string]string{"KUBECONFIG": filepath.Join(dir, "kc")}), &log); err != nil {
		t.Errorf("run answered %v, want nil when its context ends", err)
	}
	if want := `msg=starting server=http://gp cluster=` + cluster + ` kubernetes=https://127.0.0.1:1`; !strings.Contains(log.String(), want) {
		t.Errorf("the log holds no %s:\n%s", want, log.String())
	}
}
