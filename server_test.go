package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/store/storetest"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// The server starts on the fixture file, answers, and stops cleanly when
// its context ends (as on SIGTERM).
func TestRunServesFixturesAndStops(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(string(engine), func(t *testing.T) {
			dir := t.TempDir()
			fixture := filepath.Join(dir, "fixture.json")
			if err := os.WriteFile(fixture, []byte(datasettest.Base), 0o600); err != nil {
				t.Fatal(err)
			}
			addr := freeAddr(t)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				done <- run(ctx, []string{"--addr", addr, "--database-url", storetest.URL(t, engine), "--fixtures", fixture, "--demo=false"})
			}()
			var resp *http.Response
			var err error
			for i := 0; i < 100; i++ {
				resp, err = http.Get("http://" + addr + "/healthz")
				if err == nil {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			if err != nil {
				t.Fatalf("server never answered: %v", err)
			}
			resp.Body.Close()
			req, _ := http.NewRequest("POST", "http://"+addr+"/graphql", strings.NewReader(`{"query":"{ node(id: \"n1\") { name } }"}`))
			req.Header.Set("Authorization", "Bearer acme-reader")
			req.Header.Set("Content-Type", "application/json")
			resp, err = http.DefaultClient.Do(req)
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("graphql: %v %v", err, resp)
			}
			resp.Body.Close()
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("run returned %v", err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("server did not stop")
			}
		})
	}
}

func TestRunRefusesABadFixture(t *testing.T) {
	fixture := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(fixture, []byte(`{"pods":[{"id":"p","name":"x","workloadId":"nope","tenantId":1,"createdAt":"2024-01-01T00:00:00Z","k8sPhase":"Running"}]}`), 0o600)
	err := run(context.Background(), []string{"--addr", freeAddr(t), "--database-url", "sqlite:" + filepath.Join(t.TempDir(), "x.db"), "--fixtures", fixture})
	if err == nil || err.Error() != `fixture refused: pods[0] (id "p"): workloadId "nope" is not in the file nor in the database` {
		t.Fatalf("err = %v", err)
	}
}

// Shutdown stops accepting at once and never overshoots --shutdown-timeout
// (issue 16, item 7): a request whose body trickles in holds its handler
// past the timeout; a new connection during shutdown is refused; run
// returns within the timeout plus a small slack.
func TestShutdownNeverOvershoots(t *testing.T) {
	addr, cancel, done := startServing(t, "--shutdown-timeout", "2s")
	defer cancel()
	slow, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	_, _ = slow.Write([]byte("POST /graphql HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer acme-reader\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"query\":"))
	time.Sleep(300 * time.Millisecond) // the handler is reading the body
	start := time.Now()
	cancel()
	time.Sleep(200 * time.Millisecond)
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Error("a new connection during shutdown was accepted")
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run returned %v", err)
		}
		if d := time.Since(start); d > 2*time.Second+500*time.Millisecond {
			t.Errorf("shutdown took %v, more than --shutdown-timeout 2s plus 500 ms", d)
		} else {
			t.Logf("shutdown took %v with a request in flight", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("server did not stop")
	}
}

func writeFixture(t *testing.T) string {
	fixture := filepath.Join(t.TempDir(), "fixture.json")
	if err := os.WriteFile(fixture, []byte(datasettest.Base), 0o600); err != nil {
		t.Fatal(err)
	}
	return fixture
}

// A body trickled a byte at a time is cut at --read-timeout: the server
// ends the request long before the client has sent what it announced.
func TestTrickledBodyIsCut(t *testing.T) {
	addr, cancel, done := startServing(t, "--read-timeout", "1s")
	defer func() { cancel(); <-done }()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("POST /graphql HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer acme-reader\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, c); close(ended) }()
	sent := 0
	for ; sent < 100; sent++ {
		select {
		case <-ended:
			if sent >= 100 {
				t.Errorf("the server waited for %d trickled bytes", sent)
			}
			return
		case <-time.After(100 * time.Millisecond):
		}
		if _, err := c.Write([]byte("{")); err != nil {
			return // the server closed the connection: cut
		}
	}
	t.Errorf("the server still read a body trickled for %d bytes, 10 times its --read-timeout", sent)
}

// startServing runs the command on a fresh SQLite database with the test
// fixture and flags, and returns once /healthz answers; cancel stops it and
// done yields what run returned.
func startServing(t *testing.T, flags ...string) (addr string, cancel context.CancelFunc, done chan error) {
	t.Helper()
	return startServingOn(t, "sqlite:"+filepath.Join(t.TempDir(), "x.db"), flags...)
}

// startServingOn is startServing on the database dbURL.
func startServingOn(t *testing.T, dbURL string, flags ...string) (addr string, cancel context.CancelFunc, done chan error) {
	t.Helper()
	addr = freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done = make(chan error, 1)
	args := append([]string{"--addr", addr, "--database-url", dbURL,
		"--fixtures", writeFixture(t), "--demo=false"}, flags...)
	go func() { done <- run(ctx, args) }()
	for i := 0; ; i++ {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			return addr, cancel, done
		}
		if i == 200 {
			cancel()
			t.Fatalf("server never answered: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
