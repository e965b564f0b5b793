package live_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/auth"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/services/credentials"
	livefeed "gpugraph/internal/services/live"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// sseStream opens vmEvents over SSE as token; lines yields its lines.
func sseStream(t *testing.T, srv *httptest.Server, token string) *bufio.Scanner {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/graphql",
		strings.NewReader(`{"query":"subscription { vmEvents { vmId to } }"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 {
		t.Fatalf("SSE: %d", resp.StatusCode)
	}
	return bufio.NewScanner(resp.Body)
}

// sseEnd reads the SSE stream to its end and answers the data of its last
// next event and whether complete followed it.
func sseEnd(t *testing.T, sc *bufio.Scanner) (last string, completed bool) {
	t.Helper()
	event := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
			if event == "complete" {
				completed = true
			}
		case strings.HasPrefix(line, "data: ") && event == "next":
			last = strings.TrimPrefix(line, "data: ")
		}
	}
	return last, completed
}

const suspendAcme = `mutation { setOrganizationState(id: "org-acme", state: SUSPENDED) { state } }`

// An organization suspended after its streams opened: each closes, the
// WebSocket with 4403 and the reason, the SSE stream with a last message
// carrying the error; another organization's stream stays open.
func TestLiveSuspendClosesStreams(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		nodeWorld(t, st, 1)
		// No periodic recheck within the test: the notification closes them.
		srv := liveServer(t, st, livefeed.New(st, livefeed.Limits{Recheck: time.Hour}))
		ws := subscribe(t, srv, "acme-reader", nil)
		nodes := subscribeNodes(t, srv, "acme-reader", nil)
		sse := sseStream(t, srv, "acme-reader")
		globex := subscribe(t, srv, "globex-operator", nil)
		time.Sleep(100 * time.Millisecond)

		servertest.GQLDo(t, srv.URL, "platform-admin", suspendAcme, nil)
		for _, s := range []*servertest.WS{ws, nodes} {
			code, reason := s.ClosedWith()
			if code != livefeed.CloseRevoked || !strings.HasPrefix(reason, auth.CodeOrganizationSuspended+": organization org-acme is suspended") {
				t.Errorf("close %d %q, want 4403 ORGANIZATION_SUSPENDED", code, reason)
			}
		}
		last, completed := sseEnd(t, sse)
		if !strings.Contains(last, `"code":"ORGANIZATION_SUSPENDED"`) || !strings.Contains(last, `"closeCode":4403`) || !completed {
			t.Errorf("SSE ended with %s (complete: %v)", last, completed)
		}
		act(t, srv, "globex-operator", "stopVm", "vm-g")
		wantEvents(globex, "globex", "vm-g:stopped")
	})
}

// A key revoked through the administration service closes its streams at
// once (4403 CREDENTIAL_REVOKED: the service notifies every replica); a key
// deleted with no API to say so is caught by the periodic recheck.
func TestLiveRevokedKeyCloses(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		revoke := func(token string) {
			storetest.Exec(t, st, "DELETE FROM api_keys WHERE token_hash = ?", auth.HashToken(token))
		}
		wantRevoked := func(s *servertest.WS) {
			t.Helper()
			code, reason := s.ClosedWith()
			if code != livefeed.CloseRevoked || !strings.HasPrefix(reason, livefeed.CodeCredentialRevoked+": ") {
				t.Errorf("close %d %q, want 4403 CREDENTIAL_REVOKED", code, reason)
			}
		}
		nodeWorld(t, st, 1)

		notified := liveServer(t, st, livefeed.New(st, livefeed.Limits{Recheck: time.Hour}))
		s := subscribe(t, notified, "acme-reader", nil)
		kept := subscribe(t, notified, "acme-operator", nil)
		time.Sleep(100 * time.Millisecond)
		// Revoked through the administration service, which notifies.
		if _, err := credentials.New(st, nil).RevokeKey(context.Background(), auth.SystemCaller(),
			models.KeyIDOf(auth.HashToken("acme-reader"))); err != nil {
			t.Fatal(err)
		}
		wantRevoked(s)

		timed := liveServer(t, st, livefeed.New(st, livefeed.Limits{Recheck: 200 * time.Millisecond}))
		s = subscribe(t, timed, "globex-operator", nil)
		time.Sleep(100 * time.Millisecond)
		revoke("globex-operator")
		wantRevoked(s)

		// The other key's stream lives on.
		act(t, notified, "acme-operator", "stopVm", "vm-0")
		wantEvents(kept, "kept", "vm-0:stopped")
	})
}

// Two servers on one PostgreSQL: an organization suspended through B
// closes its stream on A (the notification crosses replicas).
func TestLiveSuspendAcrossReplicas(t *testing.T) {
	st := storetest.Replicas(t, store.Postgres, 2)
	a, b := st[0], st[1]
	nodeWorld(t, a, 1)
	srvA := liveServer(t, a, livefeed.New(a, livefeed.Limits{Recheck: time.Hour}))
	srvB := liveServer(t, b, nil)
	s := subscribe(t, srvA, "acme-reader", nil)
	time.Sleep(100 * time.Millisecond)
	servertest.GQLDo(t, srvB.URL, "platform-admin", suspendAcme, nil)
	if code, reason := s.ClosedWith(); code != livefeed.CloseRevoked || !strings.HasPrefix(reason, auth.CodeOrganizationSuspended) {
		t.Fatalf("close %d %q on A, want 4403 ORGANIZATION_SUSPENDED", code, reason)
	}
}

// A stream opened with an access token (POST /api/v1/token) is rechecked
// by the authenticator that admitted it, which reads access tokens: it
// stays open across rechecks and receives what follows.
func TestLiveAccessTokenStreamOutlivesRechecks(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		nodeWorld(t, st, 1)
		srv := liveServer(t, st, livefeed.New(st, livefeed.Limits{Recheck: 100 * time.Millisecond}))
		app, err := credentials.New(st, nil).CreateApplication(context.Background(), auth.SystemCaller(),
			credentials.Spec{OrganizationID: "org-acme", Name: "console", Permissions: []string{auth.ComputeRead}})
		if err != nil {
			t.Fatal(err)
		}
		body, _ := json.Marshal(map[string]string{"grantType": "client_credentials", "clientId": app.ID, "clientSecret": app.Secret})
		resp, err := http.Post(srv.URL+"/api/v1/token", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		var tok struct{ AccessToken string }
		if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("token: %d %v", resp.StatusCode, err)
		}
		resp.Body.Close()
		s := subscribe(t, srv, tok.AccessToken, nil)
		time.Sleep(500 * time.Millisecond) // several rechecks
		act(t, srv, "acme-operator", "stopVm", "vm-0")
		wantEvents(s, "events", "vm-0:stopped")
	})
}
