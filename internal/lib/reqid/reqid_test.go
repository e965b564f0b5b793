package reqid

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestSane(t *testing.T) {
	for _, tc := range []struct {
		id   string
		want bool
	}{
		{"abc-123_XYZ.~", true},
		{strings.Repeat("a", MaxLen), true},
		{strings.Repeat("a", MaxLen+1), false},
		{"", false},
		{"with space", false},
		{"new\nline", false},
		{"tab\t", false},
		{"zoë", false},
		{"nul\x00", false},
		{"del\x7f", false},
	} {
		if got := Sane(tc.id); got != tc.want {
			t.Errorf("Sane(%q) = %v, want %v", tc.id, got, tc.want)
		}
	}
}

func TestMiddlewareEchoesOrMakes(t *testing.T) {
	var seen string
	h := Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen = From(r.Context()) }))
	for _, tc := range []struct{ sent, want string }{
		{"client-id-1", "client-id-1"},
		{"bad id", ""},
		{strings.Repeat("x", 200), ""},
		{"", ""},
	} {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		if tc.sent != "" {
			req.Header.Set(Header, tc.sent)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		got := rec.Header().Get(Header)
		if got != seen {
			t.Errorf("sent %q: header %q, context %q", tc.sent, got, seen)
		}
		if tc.want != "" && got != tc.want {
			t.Errorf("sent %q: got %q, want it echoed", tc.sent, got)
		}
		if tc.want == "" && (len(got) != 32 || got == tc.sent) {
			t.Errorf("sent %q: got %q, want a fresh 32-hex-digit id", tc.sent, got)
		}
	}
}

func TestLogHandlerAddsID(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(LogHandler(slog.NewJSONHandler(&buf, nil))).With("k", "v")
	log.InfoContext(With(context.Background(), "rid-7"), "hello")
	log.Info("outside")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("got %d lines: %s", len(lines), buf.String())
	}
	var first, second map[string]any
	_ = json.Unmarshal([]byte(lines[0]), &first)
	_ = json.Unmarshal([]byte(lines[1]), &second)
	if first["requestId"] != "rid-7" || first["k"] != "v" {
		t.Errorf("in a request: %s", lines[0])
	}
	if _, ok := second["requestId"]; ok {
		t.Errorf("outside a request: %s", lines[1])
	}
}
