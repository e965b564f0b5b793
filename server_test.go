package main

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gpugraph/httpapi/servertest"
	"gpugraph/store/storetest"
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
			if err := os.WriteFile(fixture, []byte(servertest.Base), 0o600); err != nil {
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
