package contentcoding

import (
	"strings"
	"testing"
)

func TestNegotiate(t *testing.T) {
	for _, c := range []struct {
		header string
		want   string
	}{
		{"", ""},
		{"gzip", "gzip"},
		{"br", "br"},
		{"gzip, deflate, br, zstd", "br"}, // Chromium's
		{"gzip, deflate", "gzip"},
		{"br;q=0, gzip", "gzip"},
		{"BR;Q=0.5, GZIP", "br"},
		{"gzip;q=0", ""},
		{"*", "br"},
		{"*;q=0", ""},
		{"*, br;q=0", "gzip"},
		{"x-gzip", "gzip"},
		{"identity", ""},
		{"deflate", ""},
		{"gzip;q=abc", ""},
		{"gzip;q=2", ""},
		{"gzip;q=0, *", "br"},
		{"gzip;q=0, gzip;q=0.5", "gzip"},
		{"gzip;q=-1", ""},
		{" , ;q=1, gzip ; q = 0.001 ", "gzip"},
	} {
		if got := Negotiate([]string{c.header}, true, true); got != c.want {
			t.Errorf("Accept-Encoding %q: %q, want %q", c.header, got, c.want)
		}
	}
	if got := Negotiate([]string{"br, gzip"}, false, true); got != "gzip" {
		t.Errorf("no brotli copy: %q, want gzip", got)
	}
	// The API's answers: gzip only (haveBr false).
	for header, want := range map[string]string{"gzip": "gzip", "GZIP": "gzip", "deflate, gzip;q=0.5": "gzip",
		"br": "", "identity": "", "*": "gzip", "br;q=1, *;q=0.1": "gzip", "gzip; q=0.000": "", "gzip;q=0, *": ""} {
		if got := Negotiate([]string{header}, false, true); got != want {
			t.Errorf("API answer, Accept-Encoding %q: %q, want %q", header, got, want)
		}
	}
	if got := Negotiate([]string{"br, gzip"}, false, false); got != "" {
		t.Errorf("no copies: %q, want identity", got)
	}
	if got := Negotiate([]string{"deflate", "br"}, true, true); got != "br" {
		t.Errorf("two header lines: %q, want br", got)
	}
}

func FuzzNegotiate(f *testing.F) {
	for _, s := range []string{"", "gzip, deflate, br, zstd", "br;q=0, gzip", "*;q=0", "gzip;q=1e400", ";;,,q=", "x-gzip;q=0.5"} {
		f.Add(s, true, false)
	}
	f.Fuzz(func(t *testing.T, header string, haveBr, haveGzip bool) {
		got := Negotiate([]string{header}, haveBr, haveGzip)
		switch {
		case got == "":
		case got == "br" && haveBr, got == "gzip" && haveGzip:
			if !strings.Contains(strings.ToLower(header), got[:1]) && !strings.Contains(header, "*") {
				t.Errorf("%q chose %q, which it does not name", header, got)
			}
		default:
			t.Errorf("%q (br %v, gzip %v) chose %q", header, haveBr, haveGzip, got)
		}
	})
}
