package middleware

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"gpugraph/internal/httpapi/transport"
)

func TestCompressChoosesWhatToCompress(t *testing.T) {
	big := strings.Repeat(`{"k":"v"},`, 200)
	for _, tc := range []struct {
		name, accept, streamAccept, contentType, encoding, body string
		status                                                  int
		want                                                    bool
	}{
		{name: "json", accept: "gzip", contentType: "application/json", body: big, want: true},
		{name: "csv", accept: "gzip", contentType: "text/csv; charset=utf-8", body: big, want: true},
		{name: "error status", accept: "gzip", contentType: "application/json", body: big, status: 400, want: true},
		{name: "tiny", accept: "gzip", contentType: "application/json", body: `{"count":3}`},
		{name: "not accepted", accept: "identity", contentType: "application/json", body: big},
		{name: "html", accept: "gzip", contentType: "text/html", body: big},
		{name: "already encoded", accept: "gzip", contentType: "application/json", encoding: "br", body: big},
		{name: "sse", accept: "gzip", streamAccept: "text/event-stream", contentType: "text/event-stream", body: big},
	} {
		h := Compress(transport.IsStream, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", tc.contentType)
			if tc.encoding != "" {
				w.Header().Set("Content-Encoding", tc.encoding)
			}
			if tc.status != 0 {
				w.WriteHeader(tc.status)
			}
			// In pieces, as encoders write.
			for i := 0; i < len(tc.body); i += 100 {
				_, _ = io.WriteString(w, tc.body[i:min(i+100, len(tc.body))])
			}
		}))
		req := httptest.NewRequest("GET", "/x", nil)
		req.Header.Set("Accept-Encoding", tc.accept)
		if tc.streamAccept != "" {
			req.Header.Set("Accept", tc.streamAccept)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		wantStatus := tc.status
		if wantStatus == 0 {
			wantStatus = 200
		}
		gz := rec.Header().Get("Content-Encoding") == "gzip"
		if gz != tc.want || rec.Code != wantStatus || rec.Header().Get("Vary") != "Accept-Encoding" {
			t.Errorf("%s: gzip %v status %d Vary %q, want gzip %v status %d", tc.name, gz, rec.Code, rec.Header().Get("Vary"), tc.want, wantStatus)
			continue
		}
		body := rec.Body.String()
		if gz {
			zr, err := gzip.NewReader(rec.Body)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			b, err := io.ReadAll(zr)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			body = string(b)
		}
		if body != tc.body {
			t.Errorf("%s: body changed: %.80q", tc.name, body)
		}
	}
}

// TestCompressReadsAcceptEncodingOnce: the decision is contentcoding.Negotiate's
// (gzhttp, left to itself, reads "*" and a second header line as no gzip
// and clamps q=2 to 1), and the handler behind compress sees the request
// as the client sent it, Accept-Encoding and all.
func TestCompressReadsAcceptEncodingOnce(t *testing.T) {
	big := strings.Repeat(`{"k":"v"},`, 200)
	for _, tc := range []struct {
		name   string
		accept []string
		want   bool
	}{
		{"star", []string{"*"}, true},
		{"x-gzip", []string{"x-gzip"}, true},
		{"second line", []string{"br", "gzip"}, true},
		{"named twice", []string{"gzip;q=0, gzip;q=0.5"}, true},
		{"q above one", []string{"gzip;q=2"}, false},
		{"refused", []string{"gzip;q=0"}, false},
	} {
		var seen []string
		var sawHeaders int
		h := Compress(transport.IsStream, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			seen = r.Header.Values("Accept-Encoding")
			sawHeaders = len(r.Header)
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, big)
		}))
		req := httptest.NewRequest("GET", "/x", nil)
		req.Header.Set("Authorization", "Bearer k")
		for _, v := range tc.accept {
			req.Header.Add("Accept-Encoding", v)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		gz := rec.Header().Get("Content-Encoding") == "gzip"
		if gz != tc.want || len(rec.Header().Values("Vary")) != 1 || rec.Header().Get("Vary") != "Accept-Encoding" {
			t.Errorf("%s: gzip %v Vary %q, want gzip %v and one Vary", tc.name, gz, rec.Header().Values("Vary"), tc.want)
		}
		if !slices.Equal(seen, tc.accept) || sawHeaders != 2 {
			t.Errorf("%s: the handler saw Accept-Encoding %q and %d headers, want %q and 2", tc.name, seen, sawHeaders, tc.accept)
		}
	}
}
