package gqlgenplugin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/codegen"
	"github.com/99designs/gqlgen/codegen/config"
	"github.com/vektah/gqlparser/v2/ast"

	"gpugraph/internal/fieldmodel"
	"gpugraph/internal/httpapi/loaders"
	"gpugraph/models"
)

// generate runs gqlgen's binder over gpugraph's gqlgen.yml, with extra
// schema source, and the plugin over reg; it answers the file the plugin
// writes and the config it mutated. gqlgen's own generation does not run
// (the models it would write are bound as they are).
func generate(t *testing.T, reg *fieldmodel.Registry, extra string) (string, *config.Config) {
	t.Helper()
	t.Chdir("../../..")
	cfg, err := config.LoadConfig("gqlgen.yml")
	if err != nil {
		t.Fatal(err)
	}
	if extra != "" {
		cfg.Sources = append(cfg.Sources, &ast.Source{Name: "recipe.graphqls", Input: extra})
	}
	cfg.AutoBind = append(cfg.AutoBind, "gpugraph/graph/model")
	if err := cfg.LoadSchema(); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Init(); err != nil {
		t.Fatal(err)
	}
	p := &Plugin{reg: reg, registry: "Declared", filename: filepath.Join(t.TempDir(), Filename)}
	if err := p.MutateConfig(cfg); err != nil {
		t.Fatal(err)
	}
	data, err := codegen.BuildData(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.GenerateCode(data); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p.filename)
	if err != nil {
		t.Fatal(err)
	}
	return string(b), cfg
}

// The committed graph/fieldmodel_gen.go is what the plugin writes from
// the schema, gqlgen.yml, models and the declarations as they are (make
// check-generate holds it too, with the rest of graph/).
func TestTheGeneratedFileIsUpToDate(t *testing.T) {
	got, _ := generate(t, fieldmodel.Declared, "")
	want, err := os.ReadFile(filepath.Join("graph", Filename))
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Fatal("graph/fieldmodel_gen.go is out of date: run make generate")
	}
}

// The recipe of package fieldmodel's doc, followed: a new nested field in
// the schema (Workload.lead) and one declaration make it a resolver, with
// a generated one that loads it, and a binding that says so; nothing else
// is written by hand.
func TestRecipeAddingANestedField(t *testing.T) {
	decls := []fieldmodel.Declaration{}
	for _, f := range fieldmodel.Declared.Fields() {
		decls = append(decls, *f)
	}
	decls = append(decls, fieldmodel.Load("Workload", "lead", loaders.ProjectByID,
		func(w *models.Workload) string { return w.ProjectID }, fieldmodel.Plain, fieldmodel.Reads("ProjectID")))
	decls = append(decls, fieldmodel.Planned(fieldmodel.Declared.Roots()...))
	got, cfg := generate(t, fieldmodel.NewRegistry(decls...), `extend type Workload { lead: Project }`)

	if !cfg.Models["Workload"].Fields["lead"].Resolver {
		t.Error("Workload.lead is not made a resolver")
	}
	for _, want := range []string{
		`"lead": {Resolver: true},`,
		`loadWorkloadLead = fieldmodel.Declared.Field("Workload", "lead")`,
		"func (WorkloadLoads) Lead(ctx context.Context, obj *models.Workload) (*models.Project, error) {\n\treturn fieldmodel.Resolve[*models.Project](ctx, loadWorkloadLead, obj)\n}",
	} {
		if !strings.Contains(strings.Join(strings.Fields(got), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("the generated file lacks %q:\n%s", want, got[strings.Index(got, "type WorkloadLoads"):])
		}
	}
}
