package httpapi_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

func withKey(key string) http.Header { return http.Header{"Idempotency-Key": {key}} }

func doRaw(t *testing.T, env *servertest.Env, method, path, token string, body []byte, h http.Header) (int, []byte, http.Header) {
	t.Helper()
	resp := env.Request(method, path, token, body, h)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b, resp.Header
}

// Idempotency-Key: the same request again answers the first answer byte
// for byte without acting; another request with the key is a 422; keys are
// per organization; bad keys are 400s.
func TestIdempotencyKey(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, "")
		f := newWorld()
		addVM(f, vmSpec{id: "vm-a", node: "n6", status: "running", model: h100, gpus: 1, held: []string{"n6-g0"}, cpu: 1, ram: 1, disk: 1})
		addVM(f, vmSpec{id: "vm-b", node: "n6", status: "stopped", model: h100, gpus: 1, cpu: 1, ram: 1, disk: 1})
		addVM(f, vmSpec{id: "vm-g", org: "org-globex", node: "n6", status: "running", model: h100, gpus: 1, held: []string{"n6-g1"}, cpu: 1, ram: 1, disk: 1})
		resetOps(t, st, f)

		status, first, h := doRaw(t, env, "POST", "/v1/vms/vm-a/stop", "acme-operator", nil, withKey("k1"))
		if status != 200 || h.Get("Idempotent-Replayed") != "" {
			t.Fatalf("first stop = %d %s (replayed %q)", status, first, h.Get("Idempotent-Replayed"))
		}
		// The same request again: the first answer, not a 409 VM_NOT_RUNNING.
		status, again, h := doRaw(t, env, "POST", "/v1/vms/vm-a/stop", "acme-operator", nil, withKey("k1"))
		if status != 200 || !bytes.Equal(again, first) || h.Get("Idempotent-Replayed") != "true" || h.Get("Content-Type") != "application/json" {
			t.Errorf("replay = %d %s (replayed %q), want the first answer byte for byte", status, again, h.Get("Idempotent-Replayed"))
		}
		if n := len(eventsOf(t, st, "vm-a")); n != 1 {
			t.Errorf("%d events after a replay, want 1", n)
		}
		// Without a key, the same request acts: a 409 now.
		if status, _, _ := doRaw(t, env, "POST", "/v1/vms/vm-a/stop", "acme-operator", nil, nil); status != 409 {
			t.Errorf("stop without a key = %d, want 409", status)
		}

		// A refusal is kept too: the same key answers the same 409.
		status, refused, _ := doRaw(t, env, "POST", "/v1/vms/vm-a/stop", "acme-operator", nil, withKey("k2"))
		status2, refused2, h2 := doRaw(t, env, "POST", "/v1/vms/vm-a/stop", "acme-operator", nil, withKey("k2"))
		if status != 409 || status2 != 409 || !bytes.Equal(refused, refused2) || h2.Get("Idempotent-Replayed") != "true" {
			t.Errorf("kept refusal = %d %s / %d %s", status, refused, status2, refused2)
		}

		// The key with another request: another path, method or body.
		for _, r := range []struct {
			method, path string
			body         []byte
		}{
			{"POST", "/v1/vms/vm-b/restart", nil},
			{"DELETE", "/v1/vms/vm-a", nil},
			{"POST", "/v1/vms/vm-a/stop", []byte(`{"force":true}`)},
		} {
			status, b, _ := doRaw(t, env, r.method, r.path, "acme-operator", r.body, withKey("k1"))
			if status != 422 || !strings.Contains(string(b), "IDEMPOTENCY_KEY_REUSED") {
				t.Errorf("%s %s with a used key = %d %s, want 422", r.method, r.path, status, b)
			}
		}
		if v := vmRow(t, st, "vm-b"); v.Status != "stopped" {
			t.Errorf("a 422 acted: vm-b is %s", v.Status)
		}

		// Keys are per organization: globex's k1 is its own.
		if status, b, h := doRaw(t, env, "POST", "/v1/vms/vm-g/stop", "globex-operator", nil, withKey("k1")); status != 200 || h.Get("Idempotent-Replayed") != "" {
			t.Errorf("globex's k1 = %d %s", status, b)
		}

		// Restart and terminate honour keys too.
		status, r1, _ := doRaw(t, env, "POST", "/v1/vms/vm-b/restart", "acme-operator", nil, withKey("k3"))
		status2, rb2, _ := doRaw(t, env, "POST", "/v1/vms/vm-b/restart", "acme-operator", nil, withKey("k3"))
		if status != 200 || status2 != 200 || !bytes.Equal(r1, rb2) || len(eventsOf(t, st, "vm-b")) != 1 {
			t.Errorf("restart replay = %d / %d, %d events", status, status2, len(eventsOf(t, st, "vm-b")))
		}
		status, d1, _ := doRaw(t, env, "DELETE", "/v1/vms/vm-b", "acme-operator", nil, withKey("k4"))
		status2, d2, _ := doRaw(t, env, "DELETE", "/v1/vms/vm-b", "acme-operator", nil, withKey("k4"))
		if status != 200 || status2 != 200 || !bytes.Equal(d1, d2) || len(eventsOf(t, st, "vm-b")) != 2 {
			t.Errorf("terminate replay = %d %s / %d %s", status, d1, status2, d2)
		}

		for _, h := range []http.Header{
			withKey(""), withKey(strings.Repeat("k", 256)), {"Idempotency-Key": {"a", "b"}},
		} {
			status, b, _ := doRaw(t, env, "POST", "/v1/vms/vm-a/stop", "acme-operator", nil, h)
			if status != 400 || !strings.Contains(string(b), "Idempotency-Key") {
				t.Errorf("key %q = %d %s, want 400", h.Values("Idempotency-Key"), status, b)
			}
		}
		if status, _, _ := doRaw(t, env, "POST", "/v1/vms/vm-a/stop", "acme-operator", nil, withKey(strings.Repeat("é", 255))); status != 409 {
			t.Errorf("a 255-character key = %d, want the stop's own 409", status)
		}
		// A key of a caller without the permission is neither kept nor used.
		if status, _, _ := doRaw(t, env, "POST", "/v1/vms/vm-a/stop", "acme-reader", nil, withKey("k5")); status != 403 {
			t.Errorf("reader's stop = %d", status)
		}
		if n := storetest.Count(t, st, "idempotency_keys", "idem_key = ?", "k5"); n != 0 {
			t.Errorf("a 403 kept its key")
		}
	})
}

// Identical requests racing with one key act once: one stop, one event;
// every other answer is the kept answer or 409 IDEMPOTENCY_KEY_IN_USE with
// Retry-After: 1.
func TestIdempotencyKeyRace(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, "")
		for round := range 5 {
			f := newWorld()
			addVM(f, vmSpec{id: "vm-a", node: "n6", status: "running", model: h100, gpus: 1, held: []string{"n6-g0"}, cpu: 1, ram: 1, disk: 1})
			resetOps(t, st, f)
			env.CheckKeyRace(env.RaceKey(12, "POST", "/v1/vms/vm-a/stop", "acme-operator", "race", nil), func(a servertest.Answer) bool {
				return strings.TrimSpace(a.Body) == `{"error":{"code":"IDEMPOTENCY_KEY_IN_USE","message":"a request with Idempotency-Key \"race\" is still in flight; retry once it has answered","requestId":"servertest"}}`
			})
			if evs := eventsOf(t, st, "vm-a"); len(evs) != 1 {
				t.Fatalf("round %d: %d events; want 1", round, len(evs))
			}
		}
	})
}
