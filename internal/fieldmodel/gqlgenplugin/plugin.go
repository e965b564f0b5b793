// Package gqlgenplugin is the gqlgen plugin that `make generate` runs
// (cmd/gqlgen) beside gqlgen's own: it derives from the field model
// (fieldmodel.Declared) and gqlgen's binder what would otherwise be kept by
// hand.
//
//   - As a ConfigMutator it marks every declared field `resolver: true`
//     (except Filled ones, which gqlgen reads off their struct field), so
//     gqlgen.yml does not repeat the declarations.
//   - As a CodeGenerator it writes graph/fieldmodel_gen.go: the bindings
//     gqlgen's binder chose for every object type (the Go struct, each
//     field's struct field or resolver, the marshal function of each
//     scalar), which the plans read instead of re-deriving them; and, per
//     type with Plain fields, a struct <Type>Loads whose methods are those
//     fields' resolvers (fieldmodel.Resolve), embedded in the type's
//     resolver.
//
// The generated file sits in graph/ with gqlgen's, so make check-generate
// fails when it is out of date with the schema, gqlgen.yml, models or the
// declarations.
package gqlgenplugin

import (
	_ "embed"
	"fmt"
	"go/types"
	"path/filepath"
	"slices"
	"strings"

	"github.com/99designs/gqlgen/codegen"
	"github.com/99designs/gqlgen/codegen/config"
	"github.com/99designs/gqlgen/codegen/templates"
	"github.com/99designs/gqlgen/plugin"
	"github.com/vektah/gqlparser/v2/ast"

	"gpugraph/internal/fieldmodel"
)

// Filename is the generated file's name, in the executor's directory.
const Filename = "fieldmodel_gen.go"

// Plugin is the field-model plugin over a registry of declarations.
type Plugin struct {
	reg *fieldmodel.Registry
	// registry is how the generated code names reg: a variable of package
	// fieldmodel.
	registry string
	// filename is where the file is written (Filename beside the executor
	// when empty).
	filename string
}

var (
	_ plugin.ConfigMutator = (*Plugin)(nil)
	_ plugin.CodeGenerator = (*Plugin)(nil)
)

// New is the plugin over fieldmodel.Declared.
func New() *Plugin { return &Plugin{reg: fieldmodel.Declared, registry: "Declared"} }

func (*Plugin) Name() string { return "fieldmodel" }

// MutateConfig marks the declared fields `resolver: true`; a Filled field
// must stay bound to its struct field.
func (p *Plugin) MutateConfig(cfg *config.Config) error {
	if err := p.reg.Check(cfg.Schema); err != nil {
		return err
	}
	for _, f := range p.reg.Fields() {
		entry := cfg.Models[f.Type]
		fields := entry.Fields
		if fields == nil {
			fields = map[string]config.TypeMapField{}
		}
		tf := fields[f.Name]
		if f.IsFilled() {
			if tf.Resolver {
				return fmt.Errorf("fieldmodel: %s.%s is Filled, but gqlgen.yml makes it a resolver", f.Type, f.Name)
			}
			continue
		}
		tf.Resolver = true
		fields[f.Name] = tf
		entry.Fields = fields
		cfg.Models[f.Type] = entry
	}
	return nil
}

//go:embed fieldmodel.gotpl
var tmpl string

// object is one object type as the template writes it.
type object struct {
	*codegen.Object
	Fields []field
	Loads  []field // the Plain, resolver-answered fields
}

type field struct {
	*codegen.Field
	Struct string // the struct field gqlgen reads
	Var    string // the generated variable naming the declaration
}

// GenerateCode writes graph/fieldmodel_gen.go.
func (p *Plugin) GenerateCode(data *codegen.Data) error {
	var objects []object
	for _, o := range data.Objects {
		if o.Root || o.Type == nil || strings.HasPrefix(o.Name, "__") {
			continue
		}
		if _, ok := o.Type.Underlying().(*types.Struct); !ok {
			continue
		}
		ob := object{Object: o}
		for _, f := range o.Fields {
			fl := field{Field: f}
			if !f.IsResolver && f.GoFieldType == codegen.GoFieldVariable {
				fl.Struct = f.GoFieldName
			}
			ob.Fields = append(ob.Fields, fl)
			if p.reg.Has(o.Name, f.Name) {
				d := p.reg.Field(o.Name, f.Name)
				switch {
				case d.IsPlain() && d.Loads() && !d.IsFilled():
					if !f.IsResolver {
						return fmt.Errorf("fieldmodel: %s.%s is declared Plain, but gqlgen binds it to %s", o.Name, f.Name, f.GoFieldName)
					}
					fl.Var = "load" + o.Name + templates.UcFirst(f.Name)
					ob.Loads = append(ob.Loads, fl)
				case d.IsFilled() && f.GoFieldType != codegen.GoFieldVariable:
					return fmt.Errorf("fieldmodel: %s.%s is Filled, but gqlgen binds no struct field to it", o.Name, f.Name)
				}
			}
		}
		objects = append(objects, ob)
	}
	slices.SortFunc(objects, func(a, b object) int { return strings.Compare(a.Name, b.Name) })
	var roots []*codegen.Field
	if data.QueryRoot != nil {
		for _, f := range data.QueryRoot.Fields {
			if !strings.HasPrefix(f.Name, "__") {
				roots = append(roots, f)
			}
		}
	}
	filename := p.filename
	if filename == "" {
		filename = filepath.Join(data.Config.Exec.Dir(), Filename)
	}
	return templates.Render(templates.Options{
		PackageName:     data.Config.Exec.Package,
		Filename:        filename,
		GeneratedHeader: true,
		Template:        tmpl,
		Data: map[string]any{
			"Objects":  objects,
			"Roots":    roots,
			"Registry": p.registry,
		},
		Funcs:        map[string]any{"leaf": leaf, "marshaler": marshaler},
		Packages:     data.Config.Packages,
		PruneOptions: data.Config.GetPruneOptions(),
	})
}

// scalar is the scalar or enum a field's type names, lists and pointers
// taken off, or nil for an object.
func scalar(ref *config.TypeReference) *config.TypeReference {
	t := ref
	for t != nil && (t.IsSlice() || t.IsPtr()) {
		t = t.Elem()
	}
	if t == nil || t.Definition == nil || (t.Definition.Kind != ast.Scalar && t.Definition.Kind != ast.Enum) {
		return nil
	}
	return t
}

// marshaler reports whether the field's scalar marshals itself, as the
// generated code has it (`return v`).
func marshaler(ref *config.TypeReference) bool {
	t := scalar(ref)
	return t != nil && t.IsMarshaler && !t.IsContext
}

// leaf is the Go expression of the function gqlgen marshals the field's
// scalar with, over its value as a reflect.Value ("nil" when there is
// none a plan can call): the generated code's own call, the same marshal
// function and the same cast.
func leaf(ref *config.TypeReference) string {
	t := scalar(ref)
	if t == nil || t.IsMarshaler || t.Marshaler == nil || t.IsContext || t.HasEnumValues() {
		return "nil"
	}
	if t.IsTargetNilable() && !t.IsNilable() {
		return "nil" // the marshaler takes a pointer
	}
	imports := templates.CurrentImports
	goType := imports.LookupType(t.GO)
	var v string
	if b, ok := t.GO.Underlying().(*types.Basic); ok {
		var acc, accType string
		switch {
		case b.Info()&types.IsString != 0:
			acc, accType = "v.String()", "string"
		case b.Info()&types.IsUnsigned != 0:
			acc, accType = "v.Uint()", "uint64"
		case b.Info()&types.IsInteger != 0:
			acc, accType = "v.Int()", "int64"
		case b.Info()&types.IsFloat != 0:
			acc, accType = "v.Float()", "float64"
		case b.Info()&types.IsBoolean != 0:
			acc, accType = "v.Bool()", "bool"
		default:
			return "nil"
		}
		v = acc
		if goType != accType {
			v = goType + "(" + acc + ")"
		}
	} else {
		v = "v.Interface().(" + goType + ")"
	}
	if t.CastType != nil {
		v = imports.LookupType(t.CastType) + "(" + v + ")"
	}
	return fmt.Sprintf("func(v %s.Value) %s.Marshaler { return %s(%s) }",
		imports.Lookup("reflect"), imports.Lookup("github.com/99designs/gqlgen/graphql"), templates.Call(t.Marshaler), v)
}
