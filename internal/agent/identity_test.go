package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/agent/agentapi"
)

// Sequences grow by at least one per report and start at the clock, so a
// restarted reporter starts above what an earlier one sent.
func TestNextSequence(t *testing.T) {
	before := time.Now().UnixNano()
	r := &reporter{}
	last := int64(0)
	for range 1000 {
		s := r.nextSequence()
		if s <= last || s < before {
			t.Fatalf("sequence %d after %d (clock at start %d)", s, last, before)
		}
		last = s
	}
	if again := (&reporter{}).nextSequence(); again <= before {
		t.Errorf("a restarted reporter's first sequence %d is not above the clock at the first start %d", again, before)
	}
}

// The credential file is read before any exchange, must be this node's,
// and must hold a credential; without it and without a bootstrap token the
// API key is used.
func TestReportToken(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Server: "http://127.0.0.1:1", NodeName: "n1", Log: testLogger(t), Token: "key"}
	ctx := context.Background()
	if tok, err := reportToken(ctx, cfg); err != nil || tok != "key" {
		t.Errorf("no credential file: %q %v", tok, err)
	}

	cfg.CredentialFile = filepath.Join(dir, "cred.json")
	if err := writeCredential(cfg.CredentialFile, agentapi.RegisterResponse{NodeName: "n1", ClusterID: "c", Credential: "gpgnode_x"}); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(cfg.CredentialFile); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("credential file mode: %v %v", info, err)
	}
	// The kept credential wins over a (spent) bootstrap token: no exchange.
	cfg.BootstrapToken = "gpgboot_spent"
	if tok, err := reportToken(ctx, cfg); err != nil || tok != "gpgnode_x" {
		t.Errorf("kept credential: %q %v", tok, err)
	}
	cfg.NodeName = "n2"
	if _, err := reportToken(ctx, cfg); err == nil || !strings.Contains(err.Error(), "node n1's credential, not n2's") {
		t.Errorf("another node's credential: %v", err)
	}
	cfg.NodeName = "n1"
	if err := os.WriteFile(cfg.CredentialFile, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := reportToken(ctx, cfg); err == nil || !strings.Contains(err.Error(), "is not a node credential") {
		t.Errorf("a damaged credential file: %v", err)
	}
	cfg.CredentialFile, cfg.BootstrapToken, cfg.Token = filepath.Join(dir, "none.json"), "", ""
	if _, err := reportToken(ctx, cfg); err == nil || !strings.Contains(err.Error(), "no bootstrap token") {
		t.Errorf("no file, no token: %v", err)
	}
}
