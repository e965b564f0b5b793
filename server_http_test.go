package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The http.Server as main configures it: headers bounded in size (431)
// and in time (a connection trickling them is closed), connections capped
// per address, and a subscription's SSE stream cut neither by the body's
// read deadline nor by --write-timeout (past it, the stream's next write
// used to fail).
func TestServerHTTPHardening(t *testing.T) {
	addr, cancel, done := startServing(t, "--read-header-timeout", "300ms", "--read-timeout", "1s", "--write-timeout", "1s",
		"--max-connections-per-address", "3")
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	}()
	// Nothing may stay open to count against the cap: startServing's
	// client's connection goes, and this test's client keeps none.
	http.DefaultClient.CloseIdleConnections()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}

	t.Run("header over 64 KiB", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/healthz", nil)
		req.Header.Set("X-Big", strings.Repeat("x", 100<<10))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
			t.Errorf("a 100 KiB header: %d, want 431", resp.StatusCode)
		}
	})

	t.Run("headers sent slowly", func(t *testing.T) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		start := time.Now()
		fmt.Fprint(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n")
		closed := make(chan time.Duration, 1)
		go func() {
			io.Copy(io.Discard, c) // returns when the server closes it
			closed <- time.Since(start)
		}()
		for i := 0; i < 50; i++ {
			select {
			case d := <-closed:
				if d > 2*time.Second {
					t.Errorf("closed after %v, want about the 300ms header timeout", d)
				}
				return
			case <-time.After(100 * time.Millisecond):
				fmt.Fprintf(c, "X-%d: y\r\n", i)
			}
		}
		t.Error("a connection trickling its headers for 5 s was never closed")
	})

	t.Run("SSE outlives the read and write timeouts; connections per address", func(t *testing.T) {
		// (The earlier tests' connections free their places as the server
		// closes them, up to half a second after their FIN: each connection
		// below is retried until it has one.)
		streams := make([]*bufio.Reader, 2)
		for i := range streams {
			for try := 0; ; try++ {
				req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/graphql",
					strings.NewReader(`{"query":"subscription { vmEvents(ids: [\"vm-acme-2\"]) { vmId to } }"}`))
				req.Header.Set("Authorization", "Bearer acme-operator")
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "text/event-stream")
				resp, err := (&http.Client{Transport: &http.Transport{}}).Do(req)
				if err == nil && resp.StatusCode == 200 {
					defer resp.Body.Close()
					streams[i] = bufio.NewReader(resp.Body)
					break
				}
				if try == 100 {
					t.Fatalf("SSE stream %d: %v %v", i, err, resp)
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
		// Two connections are streams; a third is a keep-alive client's
		// (its answer read whole, or the client closes the connection).
		third := &http.Client{Transport: &http.Transport{}}
		for i := 0; ; i++ {
			resp, err := third.Get("http://" + addr + "/healthz")
			if err == nil && resp.StatusCode == 200 {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				break
			}
			if i == 100 {
				t.Fatalf("a third connection: %v %v", err, resp)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if _, err := client.Get("http://" + addr + "/healthz"); err == nil {
			t.Error("a fourth connection from one address was served; the cap is 3")
		}
		third.CloseIdleConnections()
		time.Sleep(1500 * time.Millisecond) // past --read-timeout and --write-timeout
		// The third's place comes back as the server sees its close.
		var resp *http.Response
		var err error
		for i := 0; i < 100; i++ {
			req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/v1/vms/vm-acme-2/restart", nil)
			req.Header.Set("Authorization", "Bearer acme-operator")
			if resp, err = client.Do(req); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("restart once a place was free: %v %v", err, resp)
		}
		resp.Body.Close()
		for i, s := range streams {
			got := make(chan string, 1)
			go func() {
				for {
					line, err := s.ReadString('\n')
					if err != nil {
						got <- "stream ended: " + err.Error()
						return
					}
					if strings.Contains(line, `"vmId":"vm-acme-2"`) {
						got <- line
						return
					}
				}
			}()
			select {
			case line := <-got:
				if !strings.Contains(line, `"to":"DEPLOYING"`) {
					t.Errorf("stream %d after 1.5 s: %s", i, line)
				}
			case <-time.After(10 * time.Second):
				t.Errorf("stream %d: no event", i)
			}
		}
	})
}
