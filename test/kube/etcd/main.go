// Command etcd is etcd's own server, built from a module of ours because
// `go install` of go.etcd.io/etcd/server/v3 refuses its replace directives.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
