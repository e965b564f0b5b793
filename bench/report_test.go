package bench

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gpugraph/internal/store"
)

func TestReportTables(t *testing.T) {
	r := &Report{Engines: []store.Dialect{store.SQLite, store.Postgres}}
	r.Check(7, "load", "< 20 s", store.SQLite, "3.00 s", true)
	r.Set(1, "flat", store.SQLite, "2 ms")
	r.Check(7, "load", "< 20 s", store.Postgres, "25.00 s", false)
	r.Set(1, "pipe|d", store.Postgres, "n/a")
	var md, txt bytes.Buffer
	r.Markdown(&md)
	want := "| # | figure | SQLite | PostgreSQL | target |\n" +
		"| --- | --- | --- | --- | --- |\n" +
		"| 1 | flat | 2 ms | — | — |\n" +
		"| 1 | pipe\\|d | — | n/a | — |\n" +
		"| 7 | load | 3.00 s ✓ | 25.00 s ✗ | < 20 s |\n"
	if md.String() != want {
		t.Fatalf("markdown:\n%s\nwant:\n%s", md.String(), want)
	}
	r.Text(&txt)
	wantTxt := "#  figure  SQLite    PostgreSQL  target\n" +
		"-  ------  --------  ----------  ------\n" +
		"1  flat    2 ms      —           —\n" +
		"1  pipe|d  —         n/a         —\n" +
		"7  load    3.00 s ✓  25.00 s ✗   < 20 s\n"
	if txt.String() != wantTxt {
		t.Fatalf("text:\n%s\nwant:\n%s", txt.String(), wantTxt)
	}
}

func TestWriteSectionReplacesOnlyItsPart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "B.md")
	if err := os.WriteFile(path, []byte("# B\n\nbefore\n<!-- x:begin -->\nold\n<!-- x:end -->\nafter\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteSection(path, "<!-- x:begin -->", "<!-- x:end -->", "new\n"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if want := "# B\n\nbefore\n<!-- x:begin -->\nnew\n<!-- x:end -->\nafter\n"; string(b) != want {
		t.Fatalf("file is %q, want %q", b, want)
	}
	if err := WriteSection(path, "<!-- y:begin -->", "<!-- y:end -->", "more"); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(path)
	if !strings.HasSuffix(string(b), "after\n\n<!-- y:begin -->\nmore\n<!-- y:end -->\n") {
		t.Fatalf("a missing section is not appended: %q", b)
	}
}
