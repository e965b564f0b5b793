package route

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/lib/reqid"
)

// answer is what one writer answered: status, the headers an error sets,
// and the body.
type answer struct {
	status                        int
	contentType, retry, challenge string
	body                          string
}

func write(writer func(http.ResponseWriter, *http.Request, error), r *http.Request, err error) answer {
	w := httptest.NewRecorder()
	writer(w, r, err)
	return answer{w.Code, w.Header().Get("Content-Type"), w.Header().Get("Retry-After"), w.Header().Get("WWW-Authenticate"), w.Body.String()}
}

// Each REST API's error shape, with what the status asks for besides the
// body (Retry-After, the 401's challenge) and the request's id.
func TestErrorShapes(t *testing.T) {
	busy := apierr.New(http.StatusServiceUnavailable, apierr.Unavailable, "the server is busy; retry later")
	busy.RetryAfter = 5
	notFound := apierr.NotFound("VM_NOT_FOUND", "no VM vm-9 in your organization")
	notFound.Details = "ask GET /v1/vms"
	withID := httptest.NewRequest(http.MethodGet, "/v1/vms/vm-9", nil)
	withID = withID.WithContext(reqid.With(withID.Context(), "req-1"))
	bare := httptest.NewRequest(http.MethodGet, "/v1/vms", nil)
	keyed := httptest.NewRequest(http.MethodGet, "/v1/vms", nil)
	keyed.Header.Set("Authorization", "Bearer nope")
	missing := apierr.New(http.StatusUnauthorized, "UNAUTHENTICATED", "a valid API key is required")

	for _, c := range []struct {
		name   string
		writer func(http.ResponseWriter, *http.Request, error)
		r      *http.Request
		err    error
		want   answer
	}{
		{"runai 404", WriteRunaiError, withID, notFound, answer{404, "application/json", "", "",
			`{"code":404,"details":"ask GET /v1/vms","message":"no VM vm-9 in your organization","requestId":"req-1"}` + "\n"}},
		{"openrelay 404", WriteOpenRelayError, withID, notFound, answer{404, "application/json", "", "",
			`{"error":{"code":"VM_NOT_FOUND","message":"no VM vm-9 in your organization","requestId":"req-1"}}` + "\n"}},
		{"runai 503", WriteRunaiError, bare, busy, answer{503, "application/json", "5", "",
			`{"code":503,"message":"the server is busy; retry later"}` + "\n"}},
		{"openrelay 401 without a key", WriteOpenRelayError, bare, missing, answer{401, "application/json", "", `Bearer realm="gpugraph"`,
			`{"error":{"code":"UNAUTHENTICATED","message":"a valid API key is required"}}` + "\n"}},
		{"runai 401 with a key", WriteRunaiError, keyed, missing, answer{401, "application/json", "", `Bearer realm="gpugraph", error="invalid_token"`,
			`{"code":401,"message":"a valid API key is required"}` + "\n"}},
		// A cause that is no apierr.Error is never written out.
		{"openrelay internal", WriteOpenRelayError, bare, errors.New("pq: connection reset"), answer{500, "application/json", "", "",
			`{"error":{"code":"INTERNAL","message":"internal error"}}` + "\n"}},
		// Out of time: a 504 in the API's shape, not "internal error".
		{"runai out of time", WriteRunaiError, bare, fmt.Errorf("read vms: %w", context.DeadlineExceeded), answer{504, "application/json", "", "",
			`{"code":504,"message":"the request ran out of time"}` + "\n"}},
	} {
		if got := write(c.writer, c.r, c.err); got != c.want {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, got, c.want)
		}
	}
}

// A face answers in its own shape: the gate's refusals of a route take
// the shape of the API its policy names.
func TestFaceWritesItsShape(t *testing.T) {
	e := apierr.New(http.StatusTooManyRequests, "RATE_LIMITED", "slow down")
	for f, want := range map[API]string{
		Runai:     `{"code":429,"message":"slow down"}` + "\n",
		OpenRelay: `{"error":{"code":"RATE_LIMITED","message":"slow down"}}` + "\n",
	} {
		w := httptest.NewRecorder()
		f.WriteError(w, httptest.NewRequest(http.MethodPost, "/", nil), e)
		if w.Code != 429 || w.Body.String() != want {
			t.Errorf("%s: %d %s, want 429 %s", f, w.Code, w.Body, want)
		}
	}
}
