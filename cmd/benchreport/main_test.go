package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gpugraph/bench"
	"gpugraph/internal/store"
)

func env(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }

func TestParseArgs(t *testing.T) {
	var stderr bytes.Buffer
	o, err := parseArgs([]string{"-o", "B.md", "-figures", "10,9", "-engines", "sqlite", "-fleet-nodes", "3", "-cluster-pods", "900",
		"-cluster-rate", "2.5", "-cluster-steady", "5s", "-loader-wait", "2ms", "-profile", "prof"},
		env(map[string]string{"TEST_DATABASE_URL": "postgres://db"}), &stderr)
	if err != nil {
		t.Fatal(err)
	}
	c := o.cfg
	got := fmt.Sprintln(o.out, c.Figures, c.Engines, c.PostgresURL, c.FleetNodes, c.ClusterPods, c.ClusterRate, c.ClusterSteady, c.LoaderWait, c.ProfileDir, c.Log == &stderr)
	if want := "B.md map[9:true 10:true] [sqlite] postgres://db 3 900 2.5 5s 2ms prof true\n"; got != want {
		t.Errorf("parsed %s, want %s", got, want)
	}
	o, err = parseArgs([]string{"-q"}, env(map[string]string{"TEST_DATABASE_URL": "postgres://db"}), &stderr)
	if err != nil {
		t.Fatal(err)
	}
	d := bench.Defaults()
	d.PostgresURL, d.Engines = "postgres://db", []store.Dialect{store.SQLite, store.Postgres}
	if fmt.Sprintf("%+v", o.cfg) != fmt.Sprintf("%+v", d) || o.out != "" {
		t.Errorf("defaults: %+v\nwant %+v", o.cfg, d)
	}
	if stderr.Len() != 0 {
		t.Errorf("parsing wrote %q", stderr.String())
	}
}

func TestParseArgsRefusesBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-figures", "13"}, `-figures: "13" is not a number 1–12`},
		{[]string{"-figures", "1,,2"}, `-figures: "" is not a number 1–12`},
		{[]string{"-engines", "sqlite,oracle"}, `-engines: unknown engine "oracle": want sqlite or postgres`},
		{[]string{"-engines", "postgres"}, `-engines: postgres needs TEST_DATABASE_URL`},
		{[]string{"-cluster-rate", "fast"}, `invalid value "fast" for flag -cluster-rate: parse error`},
		{[]string{"-fleet-pods", "1e6"}, `invalid value "1e6" for flag -fleet-pods: parse error`},
		{[]string{"-bogus"}, `flag provided but not defined: -bogus`},
		{[]string{"-o", "B.md", "extra"}, `unexpected argument "extra"`},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			if o, err := parseArgs(c.args, env(nil), &bytes.Buffer{}); o != nil || err == nil || err.Error() != c.want {
				t.Errorf("parseArgs answered %v, %v; want %s", o, err, c.want)
			}
		})
	}
	var usage bytes.Buffer
	if _, err := parseArgs([]string{"-help"}, env(nil), &usage); !errors.Is(err, flag.ErrHelp) || !strings.Contains(usage.String(), "-figures string") {
		t.Errorf("-help answered %v and printed %q", err, usage.String())
	}
}

func TestClusterFlagsNameWhatDiffers(t *testing.T) {
	cfg := bench.Defaults()
	if got := clusterFlags(cfg); got != " -figures 10" {
		t.Errorf("defaults: %q", got)
	}
	cfg.ClusterNodes, cfg.ClusterPods, cfg.ClusterRate, cfg.ClusterSteady = 50, 1500, 2.5, 90*time.Second
	if got, want := clusterFlags(cfg), " -figures 10 -cluster-nodes 50 -cluster-pods 1500 -cluster-rate 2.5 -cluster-steady 1m30s"; got != want {
		t.Errorf("clusterFlags = %q, want %q", got, want)
	}
}

// -figures 9 rewrites the queue's section alone; a run without figure
// 10's rows leaves its section as it was.
func TestWriteMarkdownKeepsTheSectionsNotMeasured(t *testing.T) {
	path := filepath.Join(t.TempDir(), "BENCHMARKS.md")
	old := "# Benchmarks\n\nintro\n\n" + begin + "\nold figures\n" + end + "\n\n" + queueBegin + "\nold queue\n" + queueEnd + "\n\n" +
		clusterBegin + "\nold cluster\n" + clusterEnd + "\n\nafter\n"
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := &bench.Report{Engines: []store.Dialect{store.SQLite}}
	rep.Set(9, "placed within", store.SQLite, "12 ms")
	cfg := bench.Defaults()
	cfg.Figures = map[int]bool{9: true}
	if err := writeMarkdown(path, rep, bench.Machine{CPUs: 2, CPUModel: "Test CPU", MemoryGB: 4, Go: "go1.x", OS: "linux/amd64", SQLite: "3.x"}, cfg, 61*time.Second); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	queue := doc[strings.Index(doc, queueBegin):strings.Index(doc, queueEnd)]
	want := "Measured " + time.Now().UTC().Format("2006-01-02") + " with `make bench` (`go run ./cmd/benchreport -figures 9 -o BENCHMARKS.md`), 1m1s in all; loader wait the server's default.\n\n" +
		"- CPU: 2 × Test CPU (`nproc` 2)\n- memory: 4.0 GiB\n- Go: go1.x, linux/amd64\n- SQLite: 3.x\n- PostgreSQL: not measured (TEST_DATABASE_URL unset)\n"
	if !strings.HasPrefix(queue, queueBegin+"\n"+want) || !strings.Contains(queue, "12 ms") {
		t.Errorf("the queue's section:\n%s\nwant it to start\n%s", queue, want)
	}
	for _, keep := range []string{"# Benchmarks\n\nintro\n\n" + begin + "\nold figures\n" + end + "\n\n" + queueBegin,
		queueEnd + "\n\n" + clusterBegin + "\nold cluster\n" + clusterEnd + "\n\nafter\n"} {
		if !strings.Contains(doc, keep) {
			t.Errorf("the document lost %q:\n%s", keep, doc)
		}
	}
}

func TestHeartbeatFlagsNameWhatDiffers(t *testing.T) {
	cfg := bench.Defaults()
	if got := heartbeatFlags(cfg); got != " -figures 12" {
		t.Errorf("defaults: %q", got)
	}
	cfg.HeartbeatNodes, cfg.HeartbeatClients, cfg.HeartbeatRequests = 10_000, 16, 5000
	if got, want := heartbeatFlags(cfg), " -figures 12 -heartbeat-nodes 10000 -heartbeat-agents 16 -heartbeats 5000"; got != want {
		t.Errorf("heartbeatFlags = %q, want %q", got, want)
	}
}
