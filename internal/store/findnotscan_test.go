package store_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadsFindNotScan: no read of the store (or of a package below it)
// ends in gorm's Scan(dest).Error, which interpolates every statement's SQL
// with its values on the way (see the package comment). database/sql's
// Row.Scan and Rows.Scan answer an error, not a *gorm.DB, so a Scan whose
// result's Error is read is gorm's.
func TestReadsFindNotScan(t *testing.T) {
	fset := token.NewFileSet()
	var found []string
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == "storetest" {
			return filepath.SkipDir // the tests' own helpers, not reads of the store
		}
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "Error" {
				return true
			}
			if call, ok := sel.X.(*ast.CallExpr); ok {
				if fn, ok := call.Fun.(*ast.SelectorExpr); ok && fn.Sel.Name == "Scan" {
					found = append(found, fset.Position(fn.Sel.Pos()).String())
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) > 0 {
		t.Fatalf("gorm's Scan where Find reads the same without its logger:\n%s", strings.Join(found, "\n"))
	}
}
