package web

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func get(t *testing.T, h http.Handler, target string) *http.Response {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	return rec.Result()
}

func readBody(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// assetURLs returns the asset references in the page, in order.
func assetURLs(page string) []string {
	re := regexp.MustCompile(`(?:src|href)="(\./assets/[^"]+)"`)
	var urls []string
	for _, m := range re.FindAllStringSubmatch(page, -1) {
		urls = append(urls, m[1])
	}
	return urls
}

func TestIndex(t *testing.T) {
	res := get(t, Handler(), "/")
	body := readBody(t, res)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status = %d, want 200", res.StatusCode)
	}
	if got := res.Header.Get("Content-Type"); got != "text/html; charset=utf-8" {
		t.Errorf("Content-Type = %q", got)
	}
	if !strings.Contains(body, `<div id="graphiql"`) {
		t.Error("page has no GraphiQL mount point")
	}
	for _, want := range []string{"./assets/graphiql.js?v=", "./assets/graphiql.css?v="} {
		if !strings.Contains(body, want) {
			t.Errorf("page does not reference %s", want)
		}
	}
}

// The playground has to work on clusters with no internet access, so the
// page must not pull anything from another host.
func TestIndexHasNoExternalURLs(t *testing.T) {
	body := readBody(t, get(t, Handler(), "/"))
	if m := regexp.MustCompile(`(?i)https?://|["'(]//`).FindString(body); m != "" {
		t.Errorf("page references an external URL (%q)", m)
	}
}

func TestAssets(t *testing.T) {
	h := Handler()
	wantType := map[string]string{
		".js":  "text/javascript; charset=utf-8",
		".css": "text/css; charset=utf-8",
	}
	urls := assetURLs(readBody(t, get(t, h, "/")))
	if len(urls) != 2 {
		t.Fatalf("page references %d assets, want 2: %q", len(urls), urls)
	}
	for _, u := range urls {
		res := get(t, h, strings.TrimPrefix(u, "."))
		body := readBody(t, res)
		if res.StatusCode != http.StatusOK {
			t.Errorf("%s: status = %d, want 200", u, res.StatusCode)
			continue
		}
		path, _, _ := strings.Cut(u, "?")
		ext := path[strings.LastIndex(path, "."):]
		if got := res.Header.Get("Content-Type"); got != wantType[ext] {
			t.Errorf("%s: Content-Type = %q, want %q", u, got, wantType[ext])
		}
		if got := res.Header.Get("Cache-Control"); !strings.Contains(got, "max-age=31536000") {
			t.Errorf("%s: Cache-Control = %q, want a long max-age", u, got)
		}
		// GraphiQL with React and CodeMirror is far larger than this; a
		// small file means the bundle was not built.
		if len(body) < 100_000 {
			t.Errorf("%s: only %d bytes", u, len(body))
		}
	}
}

func TestAssetRevalidation(t *testing.T) {
	h := Handler()
	res := get(t, h, "/assets/graphiql.js")
	etag := res.Header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	req := httptest.NewRequest(http.MethodGet, "/assets/graphiql.js", nil)
	req.Header.Set("If-None-Match", etag)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusNotModified {
		t.Errorf("conditional GET: status = %d, want 304", rec.Code)
	}
}

func TestNotFound(t *testing.T) {
	h := Handler()
	for _, target := range []string{
		"/index.html",
		"/graphiql.js",
		"/assets/",
		"/assets/index.html",
		"/assets/missing.js",
		"/dist/graphiql.js",
		"/other",
	} {
		if res := get(t, h, target); res.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: status = %d, want 404", target, res.StatusCode)
		}
	}
}

func TestHead(t *testing.T) {
	rec := httptest.NewRecorder()
	Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodHead, "/assets/graphiql.css", nil))
	if rec.Code != http.StatusOK || rec.Body.Len() != 0 {
		t.Errorf("HEAD: status = %d, body %d bytes; want 200 and empty", rec.Code, rec.Body.Len())
	}
}
