// Command gqlgen is `make generate`: gqlgen's generate, with the field
// model's plugin (internal/fieldmodel/gqlgenplugin) beside gqlgen's own, over the
// gqlgen.yml of the working directory. -v shows gqlgen's log.
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/99designs/gqlgen/api"
	"github.com/99designs/gqlgen/codegen/config"

	"gpugraph/internal/fieldmodel/gqlgenplugin"
)

func main() {
	verbose := flag.Bool("v", false, "show gqlgen's log")
	flag.Parse()
	if !*verbose {
		log.SetOutput(io.Discard)
	}
	cfg, err := config.LoadConfigFromDefaultLocations()
	if err == nil {
		err = api.Generate(cfg, api.AddPlugin(gqlgenplugin.New()))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "generate:", err)
		os.Exit(1)
	}
}
