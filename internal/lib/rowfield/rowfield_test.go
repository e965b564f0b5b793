package rowfield

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"gpugraph/models"
)

// taggedKeys are the json keys of T's fields, in order ("-" left out).
func taggedKeys[T any]() []string {
	var out []string
	t := reflect.TypeFor[T]()
	for i := range t.NumField() {
		if key, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); key != "" && key != "-" {
			out = append(out, key)
		}
	}
	return out
}

// keys are reg's keys of columns, in order.
func columnKeys[T any](reg *Registry[T]) []string {
	var out []string
	for _, f := range reg.All() {
		if f.Column != "" && f.Key != "" {
			out = append(out, f.Key)
		}
	}
	return out
}

// Every key a row's Go fields carry is a column of the registry, in the
// same order: a field added to models with a json tag but no entry fails
// here (step 2 of the recipe).
func TestEveryTaggedFieldIsRegistered(t *testing.T) {
	for name, c := range map[string]struct{ tagged, registered []string }{
		"VM":   {taggedKeys[models.VM](), columnKeys(VM)},
		"Node": {taggedKeys[models.Node](), columnKeys(Node)},
		"Gpu":  {taggedKeys[models.GPU](), columnKeys(GPU)},
	} {
		if !slices.Equal(c.tagged, c.registered) {
			t.Errorf("%s: models has the keys %v, the registry %v", name, c.tagged, c.registered)
		}
	}
}

// New reads each column's key and Go field off the row type, and refuses
// an Into that points at no field of it.
func TestNewReadsKeys(t *testing.T) {
	type box struct {
		ID    string `json:"id"`
		Inner struct{ X int }
		Note  *string `json:"note,omitempty"`
		Hid   int     `json:"-"`
	}
	r := New(
		Field[box]{Column: "id", Into: func(b *box) any { return &b.ID }},
		Field[box]{Column: "note", Into: func(b *box) any { return &b.Note }},
		Field[box]{Column: "hid", Into: func(b *box) any { return &b.Hid }},
		Field[box]{Key: "derived"},
	)
	var got []string
	for _, f := range r.All() {
		got = append(got, f.Key+"/"+f.GoField)
	}
	if want := []string{"id/ID", "note/Note", "/Hid", "derived/"}; !slices.Equal(got, want) {
		t.Errorf("keys %v, want %v", got, want)
	}
	if k := r.Keys(); !slices.Equal(k, []string{"id", "note", "derived"}) {
		t.Errorf("Keys %v", k)
	}
	defer func() {
		if recover() == nil {
			t.Error("an Into into a nested field is taken")
		}
	}()
	New(Field[box]{Column: "x", Into: func(b *box) any { return &b.Inner.X }})
}
