package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"gpugraph/demo"
)

// lockedBuffer is a bytes.Buffer the server and the test share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// On the demo's data the banner names the playground and the demo keys at
// every start, not only at the one that loaded the data.
func TestDemoBannerEveryStart(t *testing.T) {
	t.Cleanup(func() { banner = os.Stderr })
	db := "sqlite:" + filepath.Join(t.TempDir(), "demo.db")
	last := demo.Keys()[len(demo.Keys())-1].Token
	for start := 1; start <= 2; start++ {
		out := &lockedBuffer{}
		banner = out
		addr := freeAddr(t)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- run(ctx, []string{"--addr", addr, "--database-url", db}) }()
		deadline := time.Now().Add(60 * time.Second)
		for !strings.Contains(out.String(), last) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("start %d: %v", start, err)
		}
		got := out.String()
		if !strings.Contains(got, "Playground: http://"+addr+"/ (type a key into its API key field)") {
			t.Errorf("start %d: no playground URL:\n%s", start, got)
		}
		for _, k := range demo.Keys() {
			if !strings.Contains(got, "  "+k.Token+" ") {
				t.Errorf("start %d: key %s missing:\n%s", start, k.Token, got)
			}
		}
		if loaded := strings.Contains(got, "Loaded the demo data set."); loaded != (start == 1) {
			t.Errorf("start %d: says it loaded the demo: %v", start, loaded)
		}
	}
}

func TestDemoBannerURL(t *testing.T) {
	var b bytes.Buffer
	printDemoBanner(&b, &net.TCPAddr{IP: net.IPv6zero, Port: 8080}, true)
	if first, _, _ := strings.Cut(b.String(), "\n"); !strings.HasPrefix(first, "Playground: http://localhost:8080/ ") {
		t.Errorf("wildcard listener: %q", first)
	}
	b.Reset()
	printDemoBanner(&b, &net.TCPAddr{IP: net.IPv4(10, 0, 0, 7), Port: 9000}, true)
	if !strings.HasPrefix(b.String(), "Playground: http://10.0.0.7:9000/ ") ||
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
		printDemoBanner(&b, addr, tc.required)
		if !strings.Contains(b.String(), tc.want) ||
			!strings.HasSuffix(b.String(), "\nThe demo's node agents run in this process and report with node credentials, enrolled at every start.\n") {
			t.Errorf("required=%v: banner\n%s\nwant the line\n%s", tc.required, b.String(), tc.want)
		}
		if n := strings.Count(b.String(), "(refused here") + strings.Count(b.String(), "(legacy mode"); n != 3 {
			t.Errorf("required=%v: %d agent keys noted, want 3:\n%s", tc.required, n, b.String())
		}
	}
}
