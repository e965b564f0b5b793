package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gpugraph/demo/agents"
	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/lib/lockedbuf"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// logLines are the start log's JSON lines.
type logLines []map[string]any

func readLog(t *testing.T, s string) logLines {
	t.Helper()
	var out logLines
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// count is how many lines of level have a message containing msg.
func (l logLines) count(level, msg string) int {
	n := 0
	for _, m := range l {
		if m["level"] == level && strings.Contains(m["msg"].(string), msg) {
			n++
		}
	}
	return n
}

// captureLog sends the server's log to a buffer for the test.
func captureLog(t *testing.T) *lockedbuf.Buffer {
	out := &lockedbuf.Buffer{}
	logOutput = out
	t.Cleanup(func() { logOutput = os.Stderr })
	return out
}

// reportAs posts a heartbeat of the test fixture's gpu-node-1 with token.
func reportAs(t *testing.T, addr, token string) (int, string) {
	t.Helper()
	body, _ := json.Marshal(agentapi.HeartbeatRequest{NodeName: "gpu-node-1", AgentVersion: "2.6.1"})
	return requestAs(t, "POST", addr, token, agentapi.HeartbeatPath, body)
}

// Started as main starts it, with --node-credentials-required unset, the
// server refuses every agent report made with an API key, on every
// engine, and says nothing of a legacy mode.
func TestNodeCredentialsRequiredByDefault(t *testing.T) {
	if o, err := parseFlags(nil); err != nil || !o.nodeCredentialsRequired {
		t.Fatalf("parseFlags(nil): nodeCredentialsRequired %v, %v", o.nodeCredentialsRequired, err)
	}
	for _, engine := range storetest.Engines() {
		t.Run(string(engine), func(t *testing.T) {
			log := captureLog(t)
			addr, cancel, done := startServingOn(t, storetest.URL(t, engine))
			s, b := reportAs(t, addr, "acme-agent")
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if s != 403 || !strings.Contains(b, `"code":"NODE_CREDENTIAL_REQUIRED"`) || !strings.Contains(b, "--bootstrap-token") {
				t.Errorf("a nodes.report key's heartbeat: %d %s", s, b)
			}
			if n := readLog(t, log.String()).count("WARN", "legacy mode"); n != 0 {
				t.Errorf("%d legacy-mode warnings in a default start:\n%s", n, log)
			}
		})
	}
}

// --node-credentials-required=false (or its environment variable) is the
// legacy mode: key reports work as before, and the start log warns once —
// not once per report or per node.
func TestLegacyNodeReportKeys(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flags []string
		env   string
	}{
		{"flag", []string{"--node-credentials-required=false"}, ""},
		{"environment", nil, "false"},
		{"flag over environment", []string{"--node-credentials-required=false"}, "true"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv("GPUGRAPH_NODE_CREDENTIALS_REQUIRED", tc.env)
			}
			log := captureLog(t)
			addr, cancel, done := startServing(t, tc.flags...)
			for i := range 3 {
				if s, b := reportAs(t, addr, "acme-agent"); s != 200 {
					t.Errorf("key heartbeat %d in legacy mode: %d %s", i, s, b)
				}
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			lines := readLog(t, log.String())
			if n := lines.count("WARN", "legacy mode (--node-credentials-required=false)"); n != 1 {
				t.Errorf("%d legacy-mode warnings, want 1:\n%s", n, log)
			}
			if n := lines.count("WARN", "API key"); n != 1 {
				t.Errorf("%d warnings about API keys, want the one at start:\n%s", n, log)
			}
		})
	}
	t.Run("unparsable environment", func(t *testing.T) {
		t.Setenv("GPUGRAPH_NODE_CREDENTIALS_REQUIRED", "nope")
		_, err := parseFlags(nil)
		if err == nil || err.Error() != `GPUGRAPH_NODE_CREDENTIALS_REQUIRED="nope": want true or false` {
			t.Errorf("parseFlags: %v", err)
		}
	})
}

// `make run`: the demo's in-process agents enroll and report with node
// credentials on a default start, so no key reports and nothing warns
// about one, and every online demo node is reported.
func TestDemoAgentsReportWithNodeCredentials(t *testing.T) {
	t.Cleanup(func() { banner = os.Stderr })
	banner = io.Discard
	log := captureLog(t)
	db := "sqlite:" + filepath.Join(t.TempDir(), "demo.db")
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"--addr", addr, "--database-url", db}) }()
	stop := func() {
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	// The server listens once migrations and the demo load are done.
	for i := 0; ; i++ {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			break
		}
		if i == 1200 {
			stop()
			t.Fatalf("the demo server never answered: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	st, err := store.Open(db)
	if err != nil {
		stop()
		t.Fatalf("open %s: %v", db, err)
	}
	defer st.Close()
	// The demo lists ten nodes online; each gets a credential, then
	// reports with it (a credential's reports carry a sequence).
	const online = 10
	for deadline := time.Now().Add(60 * time.Second); ; {
		var creds, reported int64
		creds = storetest.Count(t, st, "node_credentials", "")
		reported = storetest.Count(t, st, "nodes", "last_heartbeat_at IS NOT NULL AND report_sequence > 0 AND status = ?", models.NodeOnline)
		if creds == online && reported == online {
			break
		}
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("after 60 s: %d node credentials, %d nodes reported with one; want %d\n%s", creds, reported, online, log)
		}
		time.Sleep(50 * time.Millisecond)
	}
	s, b := reportAs(t, addr, agents.Token)
	stop()
	if s != 403 || !strings.Contains(b, "NODE_CREDENTIAL_REQUIRED") {
		t.Errorf("the demo's agent key on a default start: %d %s", s, b)
	}
	for _, m := range readLog(t, log.String()) {
		msg, _ := m["msg"].(string)
		if _, agent := m["demoAgent"]; (agent && m["level"] != "INFO") || strings.Contains(msg, "API key (--token)") || strings.Contains(msg, "legacy mode") {
			t.Errorf("the demo start logged %v", m)
		}
	}
}
