package httpapi_test

import (
	"strings"
	"testing"

	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// Every type, field, argument, input field and enum value of the schema
// carries a description, as introspection answers it (GraphQL's own __
// types and the built-in scalars aside), so a playground's docs and a
// generated client document the whole API.
func TestEveryPartOfTheSchemaIsDescribed(t *testing.T) {
	env := servertest.New(t, storetest.Open(t, store.SQLite), servertest.Base)
	const q = `{ __schema { types { name kind description
		fields(includeDeprecated: true) { name description args { name description } }
		inputFields { name description }
		enumValues(includeDeprecated: true) { name description } } } }`
	type named struct{ Name, Description string }
	var got struct {
		Schema struct {
			Types []struct {
				Name, Kind, Description string
				Fields                  []struct {
					Name, Description string
					Args              []named
				}
				InputFields []named
				EnumValues  []named
			}
		} `json:"__schema"`
	}
	env.Decode(env.GraphQL("acme-reader", q, nil), &got)
	builtin := map[string]bool{"String": true, "Int": true, "Float": true, "Boolean": true, "ID": true}
	var missing []string
	for _, typ := range got.Schema.Types {
		if strings.HasPrefix(typ.Name, "__") || builtin[typ.Name] {
			continue
		}
		if typ.Description == "" {
			missing = append(missing, typ.Name)
		}
		for _, f := range typ.Fields {
			if f.Description == "" {
				missing = append(missing, typ.Name+"."+f.Name)
			}
			for _, a := range f.Args {
				if a.Description == "" {
					missing = append(missing, typ.Name+"."+f.Name+"("+a.Name+")")
				}
			}
		}
		for _, f := range typ.InputFields {
			if f.Description == "" {
				missing = append(missing, typ.Name+"."+f.Name)
			}
		}
		for _, v := range typ.EnumValues {
			if v.Description == "" {
				missing = append(missing, typ.Name+"."+v.Name)
			}
		}
	}
	if len(missing) > 0 {
		t.Fatalf("%d parts of the schema have no description:\n%s", len(missing), strings.Join(missing, "\n"))
	}
}

// keptTypeNames are the type names that break the schema's naming rule,
// each with why it stays: GraphQL cannot deprecate a type, and renaming
// one breaks every client fragment on it.
var keptTypeNames = map[string]string{
	"VM": "the contract pins it; clients spread fragments on VM",
}

// The schema spells an initialism as a word, as its first types did (Gpu,
// GpuModel, VmStatus, VmList, VmEvent, gpuIds, restartVm): no type, field,
// argument or input field name holds two capitals in a row, so a client
// generator derives one spelling. Enum values are SCREAMING_CASE and
// exempt; keptTypeNames lists the one old exception.
func TestNamesSpellInitialismsAsWords(t *testing.T) {
	env := servertest.New(t, storetest.Open(t, store.SQLite), servertest.Base)
	const q = `{ __schema { types { name kind
		fields(includeDeprecated: true) { name args { name } }
		inputFields { name } } } }`
	type named struct{ Name string }
	var got struct {
		Schema struct {
			Types []struct {
				Name, Kind string
				Fields     []struct {
					Name string
					Args []named
				}
				InputFields []named
			}
		} `json:"__schema"`
	}
	env.Decode(env.GraphQL("acme-reader", q, nil), &got)
	shouts := func(s string) bool {
		for i := 1; i < len(s); i++ {
			if 'A' <= s[i-1] && s[i-1] <= 'Z' && 'A' <= s[i] && s[i] <= 'Z' {
				return true
			}
		}
		return false
	}
	var bad []string
	for _, typ := range got.Schema.Types {
		if strings.HasPrefix(typ.Name, "__") || typ.Name == "ID" { // GraphQL's own
			continue
		}
		if _, kept := keptTypeNames[typ.Name]; shouts(typ.Name) && !kept {
			bad = append(bad, typ.Name)
		}
		for _, f := range typ.Fields {
			if shouts(f.Name) {
				bad = append(bad, typ.Name+"."+f.Name)
			}
			for _, a := range f.Args {
				if shouts(a.Name) {
					bad = append(bad, typ.Name+"."+f.Name+"("+a.Name+")")
				}
			}
		}
		for _, f := range typ.InputFields {
			if shouts(f.Name) {
				bad = append(bad, typ.Name+"."+f.Name)
			}
		}
	}
	if len(bad) > 0 {
		t.Fatalf("names with an initialism in capitals: %v", bad)
	}
}
