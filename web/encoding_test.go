package web

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func getEncoded(t *testing.T, h http.Handler, target, acceptEncoding string, header http.Header) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// Every encoding of every resource is the same bytes once decoded, with
// its own validator, and says that it varies by Accept-Encoding.
func TestPrecompressedVariants(t *testing.T) {
	h := Handler()
	for _, target := range []string{"/", "/assets/graphiql.js", "/assets/graphiql.css"} {
		identity := getEncoded(t, h, target, "", nil)
		if identity.Header().Get("Content-Encoding") != "" {
			t.Fatalf("%s: encoded without Accept-Encoding", target)
		}
		etags := map[string]string{"": identity.Header().Get("ETag")}
		for _, enc := range []string{"gzip", "br"} {
			rec := getEncoded(t, h, target, "gzip, deflate, "+enc, nil)
			want := enc
			if target == "/" {
				want = "gzip" // the page is rewritten at start, and Go has no brotli writer
			}
			if got := rec.Header().Get("Content-Encoding"); got != want {
				t.Errorf("%s, %s: Content-Encoding %q, want %q", target, enc, got, want)
				continue
			}
			for k, v := range map[string]string{"Vary": "Accept-Encoding", "Content-Type": identity.Header().Get("Content-Type")} {
				if got := rec.Header().Get(k); got != v {
					t.Errorf("%s, %s: %s = %q, want %q", target, enc, k, got, v)
				}
			}
			if rec.Body.Len() >= identity.Body.Len() {
				t.Errorf("%s, %s: %d bytes, identity %d", target, enc, rec.Body.Len(), identity.Body.Len())
			}
			if want == "gzip" {
				zr, err := gzip.NewReader(bytes.NewReader(rec.Body.Bytes()))
				if err != nil {
					t.Fatal(err)
				}
				plain, err := io.ReadAll(zr)
				if err != nil || !bytes.Equal(plain, identity.Body.Bytes()) {
					t.Errorf("%s: gzip copy decodes to %d bytes (%v), identity is %d", target, len(plain), err, identity.Body.Len())
				}
			}
			etags[want] = rec.Header().Get("ETag")
			cond := getEncoded(t, h, target, want, http.Header{"If-None-Match": {etags[want]}})
			if cond.Code != http.StatusNotModified {
				t.Errorf("%s, %s: conditional GET answered %d, want 304", target, want, cond.Code)
			}
		}
		seen := map[string]bool{}
		for _, e := range etags {
			if e == "" || seen[e] {
				t.Errorf("%s: ETags %v are not distinct", target, etags)
			}
			seen[e] = true
		}
	}
}

// The brotli copies are checked against the identity bytes by the build
// (Node's zlib writes them); here they must at least be the smallest.
func TestBrotliSmallest(t *testing.T) {
	for name := range assetTypes {
		id, gz, br := mustRead(name), mustRead(name+".gz"), mustRead(name+".br")
		if !(len(br) < len(gz) && len(gz) < len(id)) {
			t.Errorf("%s: brotli %d, gzip %d, identity %d", name, len(br), len(gz), len(id))
		}
	}
}

// GraphiQL's stylesheet embeds 34 fonts; the build keeps the four faces
// the page draws with, Latin only.
func TestFontsDropped(t *testing.T) {
	css := string(mustRead("graphiql.css"))
	if n := strings.Count(css, "@font-face"); n != 4 {
		t.Errorf("%d @font-face rules, want 4", n)
	}
}

// The policy lets the page open its subscriptions' WebSocket on its own
// host and nowhere else; a Host that could smuggle a directive is left out.
func TestContentSecurityPolicy(t *testing.T) {
	if got := contentSecurityPolicy("127.0.0.1:8080"); !strings.Contains(got, "connect-src 'self' ws://127.0.0.1:8080 wss://127.0.0.1:8080; ") {
		t.Errorf("policy: %s", got)
	}
	if got := contentSecurityPolicy("evil; script-src *"); !strings.Contains(got, "connect-src 'self'; ") || strings.Contains(got, "evil") {
		t.Errorf("policy for a hostile Host: %s", got)
	}
}
