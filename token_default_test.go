package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// tokenServer starts the command as main does, with flags, on a fresh
// SQLite database holding the test fixture and one application of
// org-acme holding only workloads.read; it answers the address and the
// application's client id and secret.
func tokenServer(t *testing.T, flags ...string) (addr, dbURL, clientID, secret string) {
	t.Helper()
	dbURL = "sqlite:" + filepath.Join(t.TempDir(), "x.db")
	mustAdmin(t, dbURL, "orgs", "create", "--id", "org-acme", "--name", "Acme", "--tenant-id", "1001")
	out := mustAdmin(t, dbURL, "apps", "create", "--org", "org-acme", "--permissions", "workloads.read", "--name", "ci")
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		k, v, _ := strings.Cut(line, " ")
		switch k {
		case "clientId":
			clientID = v
		case "clientSecret":
			secret = v
		}
	}
	addr, cancel, done := startServingOn(t, dbURL, flags...)
	t.Cleanup(func() { cancel(); <-done })
	return addr, dbURL, clientID, secret
}

// forge signs claims for clientID of org-acme holding perms with key.
func forge(t *testing.T, key []byte, clientID string, perms ...string) string {
	t.Helper()
	now := time.Now()
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"iss": "gpugraph", "sub": clientID, "org": "org-acme", "permissions": perms,
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
	}).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func getAs(t *testing.T, addr, bearer, path string) (int, string) {
	t.Helper()
	return requestAs(t, "GET", addr, bearer, path, nil)
}

// requestAs sends one request with bearer (and body as JSON, when not
// nil) and answers the status and body.
func requestAs(t *testing.T, method, addr, bearer, path string, body []byte) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, "http://"+addr+path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+bearer)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// With --token-signing-key unset (as main starts by default), access
// tokens are signed with a random key made once and kept in the database:
// a token signed with an empty key — or any key but that one — is refused,
// and the one POST /api/v1/token issues works.
func TestDefaultTokenKeyIsStoredAndRandom(t *testing.T) {
	addr, dbURL, clientID, secret := tokenServer(t)

	forged := forge(t, []byte{}, clientID, "admin", "nodes.admin", "workloads.read")
	if status, body := getAs(t, addr, forged, "/v1/admin/keys"); status != 401 || !strings.Contains(body, "invalid access token") {
		t.Fatalf("a token signed with an empty key: %d %s", status, body)
	}
	if status, body := getAs(t, addr, forged, "/api/v1/workloads/pods"); status != 401 {
		t.Fatalf("a token signed with an empty key read pods: %d %s", status, body)
	}

	body, _ := json.Marshal(map[string]string{"grantType": "client_credentials", "clientId": clientID, "clientSecret": secret})
	resp, err := http.Post("http://"+addr+"/api/v1/token", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var tok struct{ AccessToken string }
	err = json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || tok.AccessToken == "" {
		t.Fatalf("token: %d %v", resp.StatusCode, err)
	}
	if status, body := getAs(t, addr, tok.AccessToken, "/api/v1/workloads/pods?limit=1"); status != 200 {
		t.Fatalf("the issued token: %d %s", status, body)
	}

	st, err := store.Open(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var stored string
	storetest.Scan(t, st, &stored, `SELECT secret FROM signing_keys WHERE id = 'access-token'`)
	key, err := base64.RawURLEncoding.DecodeString(stored)
	if err != nil || len(key) < 32 {
		t.Fatalf("the stored signing key: %d bytes (%v)", len(key), err)
	}
	if _, err := jwt.Parse(tok.AccessToken, func(*jwt.Token) (any, error) { return key, nil }); err != nil {
		t.Fatalf("the issued token is not signed with the stored key: %v", err)
	}

	// The rotation of docs/operating.md (Credentials): the old key is kept to verify what it signed,
	// and dropped with --drop-previous.
	keys := func() map[string]string {
		var rows []struct{ ID, Secret string }
		storetest.Scan(t, st, &rows, `SELECT id, secret FROM signing_keys`)
		m := map[string]string{}
		for _, r := range rows {
			m[r.ID] = r.Secret
		}
		return m
	}
	if out := mustAdmin(t, dbURL, "signing-key", "rotate"); !strings.HasPrefix(out, "rotated the access-token signing key; every replica signs with the new one within 30s") {
		t.Fatalf("signing-key rotate: %q", out)
	}
	if k := keys(); len(k) != 2 || k["access-token-previous"] != stored || k["access-token"] == stored || len(k["access-token"]) != len(stored) {
		t.Fatalf("after a rotation the keys are %v (the old one %q)", k, stored)
	}
	if status, body := getAs(t, addr, tok.AccessToken, "/api/v1/workloads/pods?limit=1"); status != 200 {
		t.Fatalf("a token signed before the rotation: %d %s", status, body)
	}
	rotated := keys()["access-token"]
	mustAdmin(t, dbURL, "signing-key", "rotate", "--drop-previous")
	if k := keys(); len(k) != 1 || k["access-token"] == rotated || k["access-token"] == stored {
		t.Fatalf("after a rotation dropping the previous key the keys are %v", k)
	}
}

// A token's permissions are what its claims and its application both
// hold now: a leaked signing key mints no more than the application has.
func TestTokenPermissionsAreTheApplications(t *testing.T) {
	key := []byte("a-signing-key-of-at-least-32-bytes-for-this-test")
	addr, _, clientID, _ := tokenServer(t, "--token-signing-key", string(key))

	forged := forge(t, key, clientID, "admin", "nodes.admin", "compute.operate", "workloads.read")
	if status, body := getAs(t, addr, forged, "/v1/admin/keys"); status != 403 || !strings.Contains(body, "admin") {
		t.Fatalf("admin paths with claims beyond the application: %d %s", status, body)
	}
	if status, body := getAs(t, addr, forged, "/v1/vms"); status != 403 {
		t.Fatalf("compute with claims beyond the application: %d %s", status, body)
	}
	if status, body := getAs(t, addr, forged, "/api/v1/workloads/pods?limit=1"); status != 200 {
		t.Fatalf("what the application holds: %d %s", status, body)
	}
	// Claims narrower than the application are narrower still.
	narrow := forge(t, key, clientID, "compute.read")
	if status, body := getAs(t, addr, narrow, "/api/v1/workloads/pods?limit=1"); status != 403 {
		t.Fatalf("a token whose claims lack workloads.read: %d %s", status, body)
	}
}

// A signing key shorter than 32 bytes is refused at start, with a message.
func TestShortTokenKeyRefusedAtStart(t *testing.T) {
	err := run(t.Context(), []string{"--addr", "127.0.0.1:0", "--database-url", "sqlite:" + filepath.Join(t.TempDir(), "x.db"),
		"--demo=false", "--token-signing-key", "short"})
	if err == nil || err.Error() != "--token-signing-key has 5 bytes; it needs at least 32" {
		t.Fatalf("run with a 5-byte key: %v", err)
	}
}
