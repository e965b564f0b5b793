package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"

	"gpugraph/bench/peer"
)

func env(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }

func TestParseArgs(t *testing.T) {
	var stderr bytes.Buffer
	o, err := parseArgs([]string{"-server", "/tmp/gpugraph", "-o", "B.md", "-runs", "3", "-rounds", "2", "-round-time", "1s",
		"-clients", " 4, ,32", "-queries", "q1, Q3", "-nodes", "10", "-pods", "50", "-peers", " V5", "-no-gzip"}, env(map[string]string{"TEST_DATABASE_URL": "postgres://db"}), &stderr)
	if err != nil {
		t.Fatal(err)
	}
	c := o.cfg
	got := fmt.Sprintln(o.out, c.Server, c.Runs, c.Rounds, c.RoundTime, c.Clients, c.Only, c.Nodes, c.Pods, c.PostgresURL, c.Log == &stderr, peerNames(c.Peers), c.NoGzip)
	if want := "B.md /tmp/gpugraph 3 2 1s [4 32] map[Q1:true Q3:true] 10 50 postgres://db true [v5] true\n"; got != want {
		t.Errorf("parsed %s, want %s", got, want)
	}

	o, err = parseArgs([]string{"-q", "-clients", ""}, env(nil), &stderr)
	if err != nil {
		t.Fatal(err)
	}
	d := peer.Defaults()
	if c := o.cfg; c.Clients != nil || c.Only != nil || c.PostgresURL != "" || c.Log != nil || c.Runs != d.Runs || c.Rounds != d.Rounds ||
		c.RoundTime != 10*time.Second || c.NoGzip || c.Nodes != d.Nodes || c.Pods != d.Pods || c.Server != "bin/gpugraph" {
		t.Errorf("defaults: %+v", c)
	}
	if o, err = parseArgs(nil, env(nil), &stderr); err != nil || fmt.Sprint(o.cfg.Clients) != "[8 16]" || fmt.Sprint(peerNames(o.cfg.Peers)) != "[v4 v5]" {
		t.Errorf("default clients and peers: %v %v", o, err)
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
		{[]string{"-clients", "8,0"}, `-clients: "0" is not a client count`},
		{[]string{"-clients", "eight"}, `-clients: "eight" is not a client count`},
		{[]string{"-queries", "Q1,Q5"}, `-queries: "Q5" is not a query: Q1, Q2, Q3, Q4`},
		{[]string{"-queries", ","}, `-queries: "" is not a query: Q1, Q2, Q3, Q4`},
		{[]string{"-runs", "many"}, `invalid value "many" for flag -runs: parse error`},
		{[]string{"-round-time", "10"}, `invalid value "10" for flag -round-time: parse error`},
		{[]string{"-bogus"}, `flag provided but not defined: -bogus`},
		{[]string{"-peers", "v4,v6"}, `-peers: "v6" is not a release, or is named twice: v4, v5`},
		{[]string{"-peers", "v5,V5"}, `-peers: "v5" is not a release, or is named twice: v4, v5`},
		{[]string{"-peers", ""}, `-peers: "" is not a release, or is named twice: v4, v5`},
		{[]string{"bin/gpugraph"}, `unexpected argument "bin/gpugraph"`},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			if o, err := parseArgs(c.args, env(nil), &bytes.Buffer{}); o != nil || err == nil || err.Error() != c.want {
				t.Errorf("parseArgs answered %v, %v; want %s", o, err, c.want)
			}
		})
	}
	var usage bytes.Buffer
	if _, err := parseArgs([]string{"-h"}, env(nil), &usage); !errors.Is(err, flag.ErrHelp) || !strings.Contains(usage.String(), "-queries string") {
		t.Errorf("-h answered %v and printed %q", err, usage.String())
	}
}

func peerNames(ps []peer.Peer) []string {
	var n []string
	for _, p := range ps {
		n = append(n, p.Name)
	}
	return n
}
