package web

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// consoleAssetURLs are the asset references of the console's page.
func consoleAssetURLs(page string) []string {
	var urls []string
	for _, m := range regexp.MustCompile(`(?:src|href)="(/console/assets/[^"]+)"`).FindAllStringSubmatch(page, -1) {
		urls = append(urls, m[1])
	}
	return urls
}

// The app's page answers /console, /console/ and every path below it
// (its pages route by path), never cached without revalidation, with the
// playground's policy: nothing from another host.
func TestConsoleIndex(t *testing.T) {
	h := Console()
	var first string
	for _, target := range []string{"/console", "/console/", "/console/vms", "/console/fleet", "/console/vms/vm-1"} {
		res := get(t, h, target)
		body := readBody(t, res)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: status = %d, want 200", target, res.StatusCode)
		}
		for k, want := range map[string]string{
			"Content-Type":            "text/html; charset=utf-8",
			"Cache-Control":           "no-cache",
			"Content-Security-Policy": contentSecurityPolicy("example.com"),
		} {
			if got := res.Header.Get(k); got != want {
				t.Errorf("GET %s: %s = %q, want %q", target, k, got, want)
			}
		}
		if first == "" {
			first = body
		} else if body != first {
			t.Errorf("GET %s: another page than /console's", target)
		}
	}
	if !strings.Contains(first, `<div id="console">`) {
		t.Error("page has no mount point")
	}
	if m := regexp.MustCompile(`(?i)https?://|["'(]//`).FindString(first); m != "" {
		t.Errorf("page references an external URL (%q)", m)
	}
	urls := consoleAssetURLs(first)
	if len(urls) != 2 || !regexp.MustCompile(`^/console/assets/console\.css\?v=[0-9a-f]{16}$`).MatchString(urls[0]) ||
		!regexp.MustCompile(`^/console/assets/console\.js\?v=[0-9a-f]{16}$`).MatchString(urls[1]) {
		t.Errorf("page's assets = %q, want console.css and console.js, content-versioned", urls)
	}
}

// Each asset: its type, cached for good (its URL changes with its bytes),
// the policy, and each encoding the same bytes once decoded.
func TestConsoleAssets(t *testing.T) {
	h := Console()
	for _, u := range consoleAssetURLs(readBody(t, get(t, h, "/console"))) {
		path, _, _ := strings.Cut(u, "?")
		want := map[string]string{
			"Content-Type":            consoleAssetTypes[path[strings.LastIndex(path, "/")+1:]],
			"Cache-Control":           "public, max-age=31536000, immutable",
			"Content-Security-Policy": contentSecurityPolicy("example.com"),
			"Vary":                    "Accept-Encoding",
			"X-Content-Type-Options":  "nosniff",
		}
		identity := getEncoded(t, h, u, "", nil)
		for k, v := range want {
			if got := identity.Header().Get(k); got != v {
				t.Errorf("%s: %s = %q, want %q", u, k, got, v)
			}
		}
		if identity.Code != http.StatusOK || identity.Header().Get("Content-Encoding") != "" || identity.Body.Len() == 0 {
			t.Errorf("%s: status %d, encoding %q, %d bytes; want 200, identity, the asset", u, identity.Code,
				identity.Header().Get("Content-Encoding"), identity.Body.Len())
		}
		gz := getEncoded(t, h, u, "gzip", nil)
		zr, err := gzip.NewReader(gz.Body)
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		plain, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(plain, identity.Body.Bytes()) || gz.Header().Get("Content-Encoding") != "gzip" {
			t.Errorf("%s: gzip answer (Content-Encoding %q) is not the asset: %v", u, gz.Header().Get("Content-Encoding"), err)
		}
		br := getEncoded(t, h, u, "gzip, deflate, br", nil)
		if br.Header().Get("Content-Encoding") != "br" || !bytes.Equal(br.Body.Bytes(), mustRead("console/"+path[len("/console/assets/"):]+".br")) {
			t.Errorf("%s: a browser's Accept-Encoding got %q, not the brotli copy", u, br.Header().Get("Content-Encoding"))
		}
		if etag := identity.Header().Get("ETag"); etag == "" || etag == br.Header().Get("ETag") || etag == gz.Header().Get("ETag") {
			t.Errorf("%s: ETags identity %q, gzip %q, br %q: want one per encoding", u, etag, gz.Header().Get("ETag"), br.Header().Get("ETag"))
		}
	}
}

func TestConsoleNotFound(t *testing.T) {
	h := Console()
	for _, target := range []string{
		"/console/assets/",
		"/console/assets/missing.js",
		"/console/assets/index.html",
		"/console/assets/console.js.br",
		"/console/assets/graphiql.js",
		"/consoles",
	} {
		if res := get(t, h, target); res.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: status = %d, want 404", target, res.StatusCode)
		}
	}
}

// consoleBudget bounds what a first load of /console downloads as a
// browser takes it (brotli): the page's JS and CSS.
const consoleBudget = 300 * 1024

func TestConsoleSizeBudget(t *testing.T) {
	h := Console()
	total := 0
	for _, u := range consoleAssetURLs(readBody(t, get(t, h, "/console"))) {
		rec := getEncoded(t, h, u, "gzip, deflate, br, zstd", nil)
		if rec.Header().Get("Content-Encoding") != "br" {
			t.Fatalf("%s: Content-Encoding %q, want br", u, rec.Header().Get("Content-Encoding"))
		}
		t.Logf("%s: %d bytes brotli", u, rec.Body.Len())
		total += rec.Body.Len()
	}
	if total == 0 || total > consoleBudget {
		t.Errorf("first load's JS and CSS: %d bytes brotli, budget %d", total, consoleBudget)
	}
}
