package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"gpugraph/demo"
	"gpugraph/internal/auth"
	"gpugraph/internal/lib/lockedbuf"
	"gpugraph/internal/store"
)

// adminKeyLine is how the banner prints the demo's admin key.
var adminKeyLine = regexp.MustCompile(`(?m)^  export GPUGRAPH_ADMIN_KEY=(gpgkey_[A-Za-z0-9_-]+)$`)

// lastBannerLine starts the banner's last line.
const lastBannerLine = "  curl -s "

// demoStart runs the server on db until the demo's agents have started
// (vm-deploying runs), and answers what it wrote, log and banner alike,
// and the admin key it printed.
func demoStart(t *testing.T, db string, args ...string) (out, adminKey string) {
	t.Helper()
	buf := &lockedbuf.Buffer{}
	banner, logOutput = buf, buf
	t.Cleanup(func() { banner, logOutput = os.Stderr, os.Stderr })
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, append([]string{"--addr", addr, "--database-url", db}, args...)) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("run: %v", err)
		}
	}()
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(buf.String(), "/v1/admin/keys") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	// The agents' workload lines came out at INFO before vm-deploying was
	// reported running: from there, every start-up line is out.
	for status := ""; status != "running" && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		var vm struct{ Status string }
		if code := getJSON(t, "http://"+addr+"/v1/vms/vm-deploying", "acme-operator", &vm); code == http.StatusOK {
			status = vm.Status
		}
	}
	if time.Now().After(deadline) {
		t.Fatalf("vm-deploying never ran; the server wrote:\n%s", buf.String())
	}
	got := buf.String()
	if m := adminKeyLine.FindStringSubmatch(got); m != nil {
		adminKey = m[1]
		var keys struct{ Keys []struct{ Name string } }
		if code := getJSON(t, "http://"+addr+"/v1/admin/keys", adminKey, &keys); code != http.StatusOK {
			t.Errorf("the banner's admin key: GET /v1/admin/keys answered %d", code)
		}
	}
	return got, adminKey
}

// getJSON GETs url with key and decodes a 200's body into v.
func getJSON(t *testing.T, url, key string, v any) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Errorf("GET %s: %v", url, err)
		}
	}
	return resp.StatusCode
}

// On the demo's data the banner names the console, the playground, the demo keys and
// an admin key of this start at every start, not only at the one that
// loaded the data; it is the last thing written once the start is done,
// and the start's log is a few lines: the agents' own are at DEBUG.
func TestDemoBannerEveryStart(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "demo.db")
	var keys []string
	for start := 1; start <= 2; start++ {
		got, adminKey := demoStart(t, db)
		if !strings.Contains(got, "Playground: http://127.0.0.1:") || !strings.Contains(got, "(type a key into its API key field)") {
			t.Errorf("start %d: no playground URL:\n%s", start, got)
		}
		if !strings.Contains(got, "Console: http://127.0.0.1:") || !strings.Contains(got, "/console (the fleet, VMs, pods and usage in a browser") {
			t.Errorf("start %d: no console URL:\n%s", start, got)
		}
		for _, k := range demo.Keys() {
			if !strings.Contains(got, "  "+k.Token+" ") {
				t.Errorf("start %d: key %s missing:\n%s", start, k.Token, got)
			}
		}
		if loaded := strings.Contains(got, "Loaded the demo data set."); loaded != (start == 1) {
			t.Errorf("start %d: says it loaded the demo: %v", start, loaded)
		}
		if adminKey == "" || !strings.Contains(got, "DEMO ONLY: an admin key with every permission") {
			t.Fatalf("start %d: no demo-only admin key:\n%s", start, got)
		}
		keys = append(keys, adminKey)
		i := strings.LastIndex(got, lastBannerLine)
		if rest := got[i+strings.IndexByte(got[i:], '\n')+1:]; rest != "" {
			t.Errorf("start %d: written after the banner:\n%s", start, rest)
		}
		var logLines []string
		for _, line := range strings.Split(got, "\n") {
			if strings.HasPrefix(line, "{") {
				logLines = append(logLines, line)
			}
		}
		// loaded the demo (first start only), listening, the agents running.
		if want := 2 + map[bool]int{true: 1}[start == 1]; len(logLines) != want {
			t.Errorf("start %d: %d log lines, want %d:\n%s", start, len(logLines), want, strings.Join(logLines, "\n"))
		}
	}
	if keys[0] == keys[1] {
		t.Fatal("both starts printed the same admin key")
	}
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	authn := &auth.Authenticator{Store: st}
	if _, err := authn.Lookup(context.Background(), keys[0]); err == nil || !strings.HasPrefix(err.Error(), "API key revoked at ") {
		t.Errorf("the first start's admin key after the second start: %v", err)
	}
	c, err := authn.Lookup(context.Background(), keys[1])
	if err != nil || c.OrganizationID != "org-acme" || !c.Can(auth.Admin) || !c.Can(auth.NodesAdmin) {
		t.Errorf("the second start's admin key: %+v, %v", c, err)
	}
	authn.WaitUsage()
}

// Without the demo data set no start makes an admin key, nor prints a
// banner: the demo's key is the demo's alone.
func TestNoAdminKeyWithoutDemo(t *testing.T) {
	buf := &lockedbuf.Buffer{}
	banner, logOutput = buf, buf
	t.Cleanup(func() { banner, logOutput = os.Stderr, os.Stderr })
	db := "sqlite:" + filepath.Join(t.TempDir(), "plain.db")
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"--addr", addr, "--database-url", db, "--demo=false"}) }()
	for i := 0; i < 600 && !strings.Contains(buf.String(), `"msg":"listening"`); i++ {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); strings.Contains(got, "GPUGRAPH_ADMIN_KEY") || strings.Contains(got, "Playground:") || !strings.Contains(got, `"msg":"listening"`) {
		t.Errorf("a start without the demo wrote:\n%s", got)
	}
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if keys, err := st.ListCredentials(context.Background(), store.KindAPIKey, ""); err != nil || len(keys) != 0 {
		t.Errorf("keys without the demo: %+v, %v", keys, err)
	}
}

func TestDemoBannerURL(t *testing.T) {
	var b bytes.Buffer
	printDemoBanner(&b, &net.TCPAddr{IP: net.IPv6zero, Port: 8080}, true, "gpgkey_x")
	if first, _, _ := strings.Cut(b.String(), "\n"); !strings.HasPrefix(first, "Console: http://localhost:8080/console ") {
		t.Errorf("wildcard listener: %q", first)
	}
	b.Reset()
	printDemoBanner(&b, &net.TCPAddr{IP: net.IPv4(10, 0, 0, 7), Port: 9000}, true, "gpgkey_x")
	if !strings.HasPrefix(b.String(), "Console: http://10.0.0.7:9000/console ") || !strings.Contains(b.String(), "\nPlayground: http://10.0.0.7:9000/ ") ||
		!strings.Contains(b.String(), "  acme-reader            Acme Robotics  compute.read workloads.read\n") {
		t.Errorf("banner:\n%s", b.String())
	}
}

// The banner says the agent keys report only in legacy mode, and how the
// demo's own agents report.
func TestDemoBannerAgentKeys(t *testing.T) {
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	for _, tc := range []struct {
		required bool
		want     string
	}{
		{true, "  acme-agent             Acme Robotics  nodes.report (refused here: this server requires node credentials; only --node-credentials-required=false accepts it)\n"},
		{false, "  acme-agent             Acme Robotics  nodes.report (legacy mode: accepted for nodes without a node credential)\n"},
	} {
		var b bytes.Buffer
		printDemoBanner(&b, addr, tc.required, "gpgkey_x")
		if !strings.Contains(b.String(), tc.want) ||
			!strings.Contains(b.String(), "\nThe demo's node agents run in this process and report with node credentials, enrolled at every start.\n") {
			t.Errorf("required=%v: banner\n%s\nwant the line\n%s", tc.required, b.String(), tc.want)
		}
		if n := strings.Count(b.String(), "(refused here") + strings.Count(b.String(), "(legacy mode"); n != 3 {
			t.Errorf("required=%v: %d agent keys noted, want 3:\n%s", tc.required, n, b.String())
		}
	}
}

// The log is text or JSON as --log-format says; auto is JSON off a
// terminal (a buffer, a pipe, /dev/null); --log-level filters.
func TestLogHandler(t *testing.T) {
	for _, tc := range []struct {
		format string
		level  slog.Level
		want   string
	}{
		{"auto", slog.LevelInfo, `{"level":"INFO","msg":"listening","addr":":8080"}` + "\n"},
		{"json", slog.LevelInfo, `{"level":"INFO","msg":"listening","addr":":8080"}` + "\n"},
		{"text", slog.LevelInfo, "level=INFO msg=listening addr=:8080\n"},
		{"text", slog.LevelDebug, "level=DEBUG msg=\"workload state\"\nlevel=INFO msg=listening addr=:8080\n"},
		{"text", slog.LevelWarn, ""},
	} {
		var b bytes.Buffer
		log := slog.New(noTime{logHandler(&b, tc.format, tc.level)})
		log.Debug("workload state")
		log.Info("listening", "addr", ":8080")
		if b.String() != tc.want {
			t.Errorf("%s at %v: %q, want %q", tc.format, tc.level, b.String(), tc.want)
		}
	}
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if isTerminal(null) || isTerminal(w) || isTerminal(&bytes.Buffer{}) {
		t.Error("/dev/null, a pipe or a buffer taken for a terminal")
	}
}

// noTime drops the time of each record, so the lines compare exactly.
type noTime struct{ slog.Handler }

func (h noTime) Handle(ctx context.Context, r slog.Record) error {
	r.Time = time.Time{}
	return h.Handler.Handle(ctx, r)
}
