package store

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// wholeStatement reports a statement that splitStatements cut in the
// middle: one that leaves a quoted string, a quoted identifier, a
// dollar-quoted body or a parenthesis open, or that does not end in a
// semicolon (but the last of a file may).
func wholeStatement(stmt string, last bool) error {
	depth := 0
	for i := 0; i < len(stmt); i++ {
		switch c := stmt[i]; c {
		case '\'', '"':
			j := strings.IndexByte(stmt[i+1:], c)
			if j < 0 {
				return fmt.Errorf("a %c quote is left open", c)
			}
			i += j + 1 // a doubled quote closes and reopens: still balanced
		case '$':
			tag := stmt[i:]
			if end := strings.IndexByte(tag[1:], '$'); end >= 0 && !strings.ContainsAny(tag[1:end+1], " \t\n;()'\"") {
				tag = tag[:end+2]
				j := strings.Index(stmt[i+len(tag):], tag)
				if j < 0 {
					return fmt.Errorf("a %s body is left open", tag)
				}
				i += len(tag) + j + len(tag) - 1
			}
		case '(':
			depth++
		case ')':
			depth--
		}
	}
	switch {
	case depth != 0:
		return fmt.Errorf("%d parentheses are left open", depth)
	case !last && !strings.HasSuffix(stmt, ";"):
		return errors.New("it does not end in a semicolon")
	}
	return nil
}

// TestMigrationsSplitIntoWholeStatements holds the runner's one shortcut:
// it cuts a migration at semicolons that end a line, which is right only
// while no string, body or parenthesis holds one. Every migration of both
// engines, tokens replaced, must split into whole statements.
func TestMigrationsSplitIntoWholeStatements(t *testing.T) {
	n := 0
	for _, d := range []Dialect{SQLite, Postgres} {
		s := &Store{Dialect: d}
		files, err := s.migrations()
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range files {
			body, err := migrationFiles.ReadFile("migrations/" + name)
			if err != nil {
				t.Fatal(err)
			}
			stmts := splitStatements(s.tokens().Replace(string(body)))
			if len(stmts) == 0 {
				t.Errorf("%s (%s): no statement", name, d)
			}
			for i, stmt := range stmts {
				n++
				if err := wholeStatement(stmt, i == len(stmts)-1); err != nil {
					t.Errorf("%s (%s), statement %d: %v:\n%s", name, d, i+1, err, stmt)
				}
			}
		}
	}
	if n < 20 {
		t.Fatalf("only %d statements read: the test reads no migrations", n)
	}
}

// TestWholeStatementBites: the check above catches what a cut at a
// line-ending semicolon inside a string, a body or parentheses leaves.
func TestWholeStatementBites(t *testing.T) {
	for _, sql := range []string{
		"INSERT INTO t (v) VALUES ('a;\nb');",
		"CREATE FUNCTION f() RETURNS trigger AS $$\nBEGIN\n  RETURN NEW;\nEND\n$$ LANGUAGE plpgsql;",
		"CREATE TABLE t (\n  a text DEFAULT 'x';\n);",
		`COMMENT ON TABLE "odd;` + "\n" + `name" IS 'x';`,
	} {
		stmts := splitStatements(sql)
		var bad int
		for i, stmt := range stmts {
			if wholeStatement(stmt, i == len(stmts)-1) != nil {
				bad++
			}
		}
		if bad == 0 {
			t.Errorf("%q split into %q, every piece taken for whole", sql, stmts)
		}
	}
	for _, sql := range []string{
		"CREATE TABLE t (a text DEFAULT 'it''s', b int);",
		"CREATE FUNCTION f() RETURNS int AS $body$ SELECT 1; $body$ LANGUAGE sql;",
		"SELECT $1::text;",
	} {
		for _, stmt := range splitStatements(sql) {
			if err := wholeStatement(stmt, true); err != nil {
				t.Errorf("%q: %v", sql, err)
			}
		}
	}
}
