//go:build tools

// Package main pins code generators so `go run` resolves them from go.mod.
package main

import (
	_ "github.com/99designs/gqlgen"
	_ "golang.org/x/tools/cmd/goimports"
)
