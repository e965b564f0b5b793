package apierr

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
)

func TestConstructorsAnswerTheirStatusAndCode(t *testing.T) {
	for _, c := range []struct {
		err          *Error
		status       int
		code, msg    string
		retryAfterOK bool
	}{
		{BadRequest("limit %d is over %d", 600, 500), 400, BadRequestCode, "limit 600 is over 500", false},
		{NotFound("VM_NOT_FOUND", "no VM %q", "vm-1"), 404, "VM_NOT_FOUND", `no VM "vm-1"`, false},
		{Conflict("VM_NOT_READY", "pending"), 409, "VM_NOT_READY", "pending", false},
		{Unauthorized("unknown API key"), 401, Unauthenticated, "unknown API key", false},
		{MissingPermission("API key", "compute.operate"), 403, Forbidden, "this API key lacks the compute.operate permission", false},
		{Refused("ORG_SUSPENDED", "suspended"), 403, "ORG_SUSPENDED", "suspended", false},
		{Timeout(), 504, TimeoutCode, "the request ran out of time", false},
		{New(http.StatusServiceUnavailable, Unavailable, "try later"), 503, Unavailable, "try later", true},
	} {
		e := c.err
		if e.Status != c.status || e.Code != c.code || e.Message != c.msg || e.Error() != c.msg {
			t.Errorf("%v: %d %s %q, want %d %s %q", e, e.Status, e.Code, e.Message, c.status, c.code, c.msg)
		}
		// Every 503 asks the client to come back, and nothing else does.
		if want := map[bool]int{true: DefaultRetryAfter, false: 0}[c.retryAfterOK]; e.RetryAfter != want {
			t.Errorf("%s: RetryAfter %d, want %d", e.Code, e.RetryAfter, want)
		}
	}
}

// A Message is formatted once: a % in an argument stays as it is.
func TestMessageIsFormattedOnce(t *testing.T) {
	if e := Unauthorized("100% unknown"); e.Message != "100% unknown" {
		t.Errorf("Unauthorized: %q", e.Message)
	}
}

func TestAsFindsTheErrorAndHidesEverythingElse(t *testing.T) {
	want := Conflict("QUOTA_EXCEEDED", "over quota")
	got, ok := As(fmt.Errorf("create: %w", want))
	if !ok || got != want {
		t.Errorf("wrapped: %v %v, want the *Error itself", got, ok)
	}
	// Anything else is internal and says nothing of its cause: not the SQL,
	// not another tenant's names.
	got, ok = As(errors.New(`pq: duplicate key value violates unique constraint "vms_pkey" (org-globex)`))
	if ok || got.Status != 500 || got.Code != Internal || got.Message != "internal error" || got.Details != "" {
		t.Errorf("plain error: %+v %v", got, ok)
	}
}
