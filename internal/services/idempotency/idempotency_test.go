package idempotency_test

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/services/idempotency"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// A key's first request reserves it; the same request again, while it is
// in flight, is a 409, and once it answered gets that answer byte for
// byte, with its headers; another request with the key is a 422. Keys are an
// organization's: the same key in another organization is its own.
func TestBeginReservesReplaysAndRefuses(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		svc := idempotency.New(st)
		stop := idempotency.Fingerprint("POST", "/api/v1/vms/vm-acme-1/stop", []byte(`{}`))
		ans, res, err := svc.Begin(ctx, "org-acme", "k-1", stop)
		if err != nil || ans != nil || res == nil {
			t.Fatalf("first request: %+v %v %v, want a reservation", ans, res, err)
		}
		_, _, err = svc.Begin(ctx, "org-acme", "k-1", stop)
		datasettest.WantError(t, err, 409, idempotency.CodeKeyInUse, `a request with Idempotency-Key "k-1" is still in flight; retry once it has answered`)

		// org-globex's k-1 is not org-acme's.
		_, gres, err := svc.Begin(ctx, "org-globex", "k-1", stop)
		if err != nil || gres == nil {
			t.Fatalf("org-globex's k-1: %v %v, want its own reservation", gres, err)
		}

		header := http.Header{"Content-Type": {"application/json"}, "Location": {"/v1/vms/vm-acme-1"},
			"Warning": {`299 - "the disk is gone"`}}
		if err := res.Finish(ctx, 202, header, []byte(`{"status":"stopping"}`)); err != nil {
			t.Fatal(err)
		}
		ans, res, err = svc.Begin(ctx, "org-acme", "k-1", stop)
		if err != nil || res != nil || ans == nil || ans.Status != 202 || string(ans.Body) != `{"status":"stopping"}` {
			t.Fatalf("replay: %+v %v %v", ans, res, err)
		}
		if !reflect.DeepEqual(ans.Header, header) {
			t.Errorf("replayed headers %v, want %v", ans.Header, header)
		}
		// org-globex's is still in flight: acme's answer is not its.
		_, _, err = svc.Begin(ctx, "org-globex", "k-1", stop)
		datasettest.WantError(t, err, 409, idempotency.CodeKeyInUse, "")

		other := idempotency.Fingerprint("POST", "/api/v1/vms/vm-acme-2/stop", []byte(`{}`))
		_, _, err = svc.Begin(ctx, "org-acme", "k-1", other)
		datasettest.WantError(t, err, 422, idempotency.CodeKeyReused,
			`Idempotency-Key "k-1" was already used with another request (a different method, path or body) in the last 24 hours; use a new key for a new request`)
		// Another face names the key its own way.
		_, _, err = svc.BeginNamed(ctx, idempotency.Naming{Key: "@idempotent key", Differs: "another mutation"}, "org-acme", "k-1", other)
		datasettest.WantError(t, err, 422, idempotency.CodeKeyReused,
			`@idempotent key "k-1" was already used with another request (another mutation) in the last 24 hours; use a new key for a new request`)
	})
}

// A server error is not kept: the key is released and a retry acts again.
func TestServerErrorReleasesTheKey(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		svc := idempotency.New(st)
		fp := idempotency.Fingerprint("DELETE", "/api/v1/vms/vm-acme-1", nil)
		_, res, err := svc.Begin(ctx, "org-acme", "k-2", fp)
		if err != nil {
			t.Fatal(err)
		}
		if err := res.Finish(ctx, 503, nil, []byte(`{"error":"try again"}`)); err != nil {
			t.Fatal(err)
		}
		ans, res, err := svc.Begin(ctx, "org-acme", "k-2", fp)
		if err != nil || ans != nil || res == nil {
			t.Fatalf("retry after a 503: %+v %v %v, want a new reservation", ans, res, err)
		}
		if err := res.Finish(ctx, 409, nil, []byte(`{"code":"CONFLICT"}`)); err != nil {
			t.Fatal(err)
		}
		if ans, _, err := svc.Begin(ctx, "org-acme", "k-2", fp); err != nil || ans.Status != 409 || string(ans.Body) != `{"code":"CONFLICT"}` || ans.Header != nil {
			t.Errorf("a client error is kept: %+v %v", ans, err)
		}
	})
}

// CheckKey takes one key of 1 to 255 characters; Fingerprint tells
// requests apart by method, path with query and body.
func TestCheckKeyAndFingerprint(t *testing.T) {
	if k, err := idempotency.CheckKey([]string{"é" + strings.Repeat("a", 254)}); err != nil || len([]rune(k)) != 255 {
		t.Errorf("255 characters: %q %v", k, err)
	}
	for _, c := range []struct {
		values []string
		msg    string
	}{
		{[]string{"a", "b"}, "send one Idempotency-Key header, not 2"},
		{[]string{""}, "Idempotency-Key is empty: send 1 to 255 characters, such as a UUID"},
		{[]string{strings.Repeat("a", 256)}, "Idempotency-Key is 256 characters long: at most 255 are allowed"},
	} {
		_, err := idempotency.CheckKey(c.values)
		datasettest.WantError(t, err, 400, idempotency.CodeBadKey, c.msg)
	}
	_, err := idempotency.CheckNamed("@idempotent key", "")
	datasettest.WantError(t, err, 400, idempotency.CodeBadKey, "@idempotent key is empty: send 1 to 255 characters, such as a UUID")
	base := idempotency.Fingerprint("POST", "/a?x=1", []byte("{}"))
	if base != idempotency.Fingerprint("POST", "/a?x=1", []byte("{}")) {
		t.Error("one request, two fingerprints")
	}
	for _, other := range []string{
		idempotency.Fingerprint("DELETE", "/a?x=1", []byte("{}")),
		idempotency.Fingerprint("POST", "/a?x=2", []byte("{}")),
		idempotency.Fingerprint("POST", "/a?x=1", []byte("{ }")),
	} {
		if other == base {
			t.Errorf("two requests, one fingerprint %s", base)
		}
	}
}
