package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"strings"
	"testing"

	"gpugraph/bench/abuse"
	"gpugraph/internal/store"
)

func env(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }

func TestParseArgs(t *testing.T) {
	var stderr bytes.Buffer
	o, err := parseArgs([]string{"-server", "/tmp/gpugraph", "-o", "B.md", "-attacks", "3, 1", "-engines", "postgres,sqlite",
		"-box", "2s", "-baseline", "1s", "-window", "3s"}, env(map[string]string{"TEST_DATABASE_URL": "postgres://db"}), &stderr)
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprintln(o.out, o.cfg.Server, o.cfg.Only, o.cfg.Engines, o.cfg.PostgresURL, o.cfg.Box, o.cfg.Baseline, o.cfg.Window, o.cfg.Log == &stderr)
	if want := "B.md /tmp/gpugraph map[1:true 3:true] [postgres sqlite] postgres://db 2s 1s 3s true\n"; got != want {
		t.Errorf("parsed %s, want %s", got, want)
	}

	// The defaults: every attack, SQLite alone without TEST_DATABASE_URL, quiet with -q.
	o, err = parseArgs([]string{"-q"}, env(nil), &stderr)
	if err != nil {
		t.Fatal(err)
	}
	d := abuse.Defaults()
	if o.out != "" || o.cfg.Server != "bin/gpugraph" || o.cfg.Only != nil || fmt.Sprint(o.cfg.Engines) != fmt.Sprint([]store.Dialect{store.SQLite}) ||
		o.cfg.Box != d.Box || o.cfg.Baseline != d.Baseline || o.cfg.Window != d.Window || o.cfg.VictimRate != d.VictimRate || o.cfg.Log != nil {
		t.Errorf("defaults: %+v", o.cfg)
	}
	if stderr.Len() != 0 {
		t.Errorf("parsing wrote %q", stderr.String())
	}
}

func TestParseArgsRefusesBadInput(t *testing.T) {
	last := len(abuse.Attacks())
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"-attacks", "0"}, nil, fmt.Sprintf(`-attacks: "0" is not a number 1–%d`, last)},
		{[]string{"-attacks", fmt.Sprint(last + 1)}, nil, fmt.Sprintf(`-attacks: "%d" is not a number 1–%d`, last+1, last)},
		{[]string{"-attacks", "1,x"}, nil, fmt.Sprintf(`-attacks: "x" is not a number 1–%d`, last)},
		{[]string{"-engines", "mysql"}, nil, `-engines: unknown engine "mysql": want sqlite or postgres`},
		{[]string{"-engines", "postgres"}, nil, `-engines: postgres needs TEST_DATABASE_URL`},
		{[]string{"-box", "soon"}, nil, `invalid value "soon" for flag -box: parse error`},
		{[]string{"-bogus"}, nil, `flag provided but not defined: -bogus`},
		{[]string{"-q", "now"}, nil, `unexpected argument "now"`},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			if o, err := parseArgs(c.args, env(c.env), &bytes.Buffer{}); o != nil || err == nil || err.Error() != c.want {
				t.Errorf("parseArgs answered %v, %v; want %s", o, err, c.want)
			}
		})
	}
	var usage bytes.Buffer
	if _, err := parseArgs([]string{"-h"}, env(nil), &usage); !errors.Is(err, flag.ErrHelp) || !strings.Contains(usage.String(), "-attacks string") {
		t.Errorf("-h answered %v and printed %q", err, usage.String())
	}
}
