package httpapi

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestAcceptsGzip(t *testing.T) {
	for _, tc := range []struct {
		header string
		want   bool
	}{
		{"gzip", true},
		{"GZIP", true},
		{"x-gzip", true},
		{"deflate, gzip;q=0.5", true},
		{"gzip;q=0", false},
		{"gzip; q=0.000", false},
		{"br", false},
		{"", false},
		{"identity", false},
		{"*", true},
		{"*;q=0", false},
		{"gzip;q=0, *", false},
		{"br;q=1, *;q=0.1", true},
		{"gzip;q=nope", false},
		{"gzip;q=2", false},
	} {
		if got := acceptsGzip(tc.header); got != tc.want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", tc.header, got, tc.want)
		}
	}
}

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
		h := compress(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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

// FuzzAcceptEncoding: any header is read without a panic, and naming
// another coding besides never changes whether gzip is accepted.
func FuzzAcceptEncoding(f *testing.F) {
	for _, seed := range []string{"gzip", "gzip;q=0", "*;q=0.5", "br, gzip;q=0.1", "x-gzip; q=1.0", ";;,,=", "gzip;q=1e400", "GZIP;Q=0"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, header string) {
		if acceptsGzip(header) != acceptsGzip(header+", br") {
			t.Errorf("%q: adding br changed the answer", header)
		}
	})
}
