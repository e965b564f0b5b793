package bench

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"gpugraph/internal/store"
)

// Row is one measured line of the table, on every engine.
type Row struct {
	Figure int
	Label  string
	Target string
	Value  map[store.Dialect]string
	// Met per engine: "yes", "no", or "" where the row has no target there.
	Met map[store.Dialect]string
}

// Report is the table of every figure, in the order rows were first set.
type Report struct {
	Engines []store.Dialect
	rows    []*Row
}

func (r *Report) row(fig int, label string) *Row {
	for _, x := range r.rows {
		if x.Figure == fig && x.Label == label {
			return x
		}
	}
	x := &Row{Figure: fig, Label: label, Value: map[store.Dialect]string{}, Met: map[store.Dialect]string{}}
	r.rows = append(r.rows, x)
	return x
}

// Set records one value of a row without a target.
func (r *Report) Set(fig int, label string, e store.Dialect, value string) {
	r.row(fig, label).Value[e] = value
}

// Check records one value of a row with a target, and whether it met it.
func (r *Report) Check(fig int, label, target string, e store.Dialect, value string, met bool) {
	x := r.row(fig, label)
	x.Target, x.Value[e] = target, value
	x.Met[e] = "no"
	if met {
		x.Met[e] = "yes"
	}
}

// Only is the report of the figures keep holds (the same rows).
func (r *Report) Only(keep func(fig int) bool) *Report {
	out := &Report{Engines: r.Engines}
	for _, x := range r.rows {
		if keep(x.Figure) {
			out.rows = append(out.rows, x)
		}
	}
	return out
}

// Rows are the rows in table order: by figure, then as first set.
func (r *Report) Rows() []*Row {
	out := append([]*Row(nil), r.rows...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Figure < out[j].Figure })
	return out
}

func engineName(e store.Dialect) string {
	if e == store.Postgres {
		return "PostgreSQL"
	}
	return "SQLite"
}

func (r *Report) cells(x *Row) []string {
	out := []string{fmt.Sprint(x.Figure), x.Label}
	for _, e := range r.Engines {
		v := x.Value[e]
		if v == "" {
			v = "—"
		}
		if m := x.Met[e]; m == "yes" {
			v += " ✓"
		} else if m == "no" {
			v += " ✗"
		}
		out = append(out, v)
	}
	t := x.Target
	if t == "" {
		t = "—"
	}
	return append(out, t)
}

func (r *Report) header() []string {
	h := []string{"#", "figure"}
	for _, e := range r.Engines {
		h = append(h, engineName(e))
	}
	return append(h, "target")
}

// Text writes the table for a terminal.
func (r *Report) Text(w io.Writer) {
	lines := [][]string{r.header()}
	for _, x := range r.Rows() {
		lines = append(lines, r.cells(x))
	}
	WriteText(w, lines)
}

// Markdown writes the table as GitHub markdown.
func (r *Report) Markdown(w io.Writer) {
	var rows [][]string
	for _, x := range r.Rows() {
		rows = append(rows, r.cells(x))
	}
	WriteMarkdown(w, r.header(), rows)
}

// WriteText writes lines, the first the header, as columns aligned for a
// terminal, with a rule under the header.
func WriteText(w io.Writer, lines [][]string) {
	if len(lines) == 0 {
		return
	}
	width := make([]int, len(lines[0]))
	for _, l := range lines {
		for i, c := range l {
			if i < len(width) {
				width[i] = max(width[i], len([]rune(c)))
			}
		}
	}
	for n, l := range lines {
		var b strings.Builder
		for i, c := range l {
			b.WriteString(c)
			if i < len(l)-1 && i < len(width) {
				b.WriteString(strings.Repeat(" ", width[i]-len([]rune(c))+2))
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
		if n == 0 {
			var sep []string
			for _, wd := range width {
				sep = append(sep, strings.Repeat("-", wd))
			}
			fmt.Fprintln(w, strings.Join(sep, "  "))
		}
	}
}

// WriteMarkdown writes header and rows as a GitHub markdown table; a '|'
// inside a cell is escaped.
func WriteMarkdown(w io.Writer, header []string, rows [][]string) {
	fmt.Fprintln(w, "| "+strings.Join(header, " | ")+" |")
	fmt.Fprintln(w, "|"+strings.Repeat(" --- |", len(header)))
	for _, row := range rows {
		c := append([]string(nil), row...)
		for i := range c {
			c[i] = strings.ReplaceAll(c[i], "|", `\|`)
		}
		fmt.Fprintln(w, "| "+strings.Join(c, " | ")+" |")
	}
}

// WriteSection replaces the part of the markdown file at path between the
// markers begin and end with body, or appends it there marked; the rest of
// the file stays as it is.
func WriteSection(path, begin, end, body string) error {
	part := begin + "\n" + strings.TrimRight(body, "\n") + "\n" + end + "\n"
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	s := string(old)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	var doc string
	switch {
	case i >= 0 && j > i:
		doc = s[:i] + part + strings.TrimPrefix(s[j+len(end):], "\n")
	case len(s) > 0:
		doc = strings.TrimRight(s, "\n") + "\n\n" + part
	default:
		doc = "# Benchmarks\n\n" + part
	}
	return os.WriteFile(path, []byte(doc), 0o644)
}
