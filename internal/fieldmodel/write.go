package fieldmodel

import (
	"bytes"
	"context"
	"errors"
	"reflect"
)

// errGqlgen is an answer the plan leaves to gqlgen: one it would have to
// report an error for.
var errGqlgen = errors.New("plan: answered by gqlgen")

// writer appends one planned answer's JSON.
type writer struct {
	ctx context.Context
	buf bytes.Buffer
	// loaded are the rows each loader field answered per key: 4,000 GPUs
	// of one page name a handful of catalog entries.
	loaded map[*field]map[any]any
}

// load answers f's rows for key, from the loader once per key.
func (w *writer) load(f *field, key any) (any, error) {
	if v, ok := w.loaded[f][key]; ok {
		return v, nil
	}
	v, err := f.load(w.ctx, key)
	if err != nil {
		return nil, err
	}
	if w.loaded == nil {
		w.loaded = map[*field]map[any]any{}
	}
	if w.loaded[f] == nil {
		w.loaded[f] = map[any]any{}
	}
	w.loaded[f][key] = v
	return v, nil
}

var null = []byte("null")

// value writes v, the Go value of p.
func (w *writer) value(p *value, v reflect.Value) error {
	if !v.IsValid() {
		return w.null(p)
	}
	if v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return w.null(p)
		}
		if p.obj == nil {
			v = v.Elem()
		}
	}
	switch {
	case p.list != nil:
		return w.list(p, v)
	case p.obj != nil:
		if v.Kind() != reflect.Pointer {
			if !v.CanAddr() {
				return errGqlgen
			}
			v = v.Addr()
		}
		return w.object(p.obj, v)
	default:
		if v.Kind() == reflect.Map && v.IsNil() {
			return w.null(p)
		}
		p.leaf(v).MarshalGQL(&w.buf)
		return nil
	}
}

// null writes null where the type allows it; a non-null field without a
// value is an error gqlgen reports.
func (w *writer) null(p *value) error {
	if p.nonNull {
		return errGqlgen
	}
	w.buf.Write(null)
	return nil
}

// list writes a slice. A nil slice is null where the type is nullable, as
// the generated code writes it, and [] where it is not.
func (w *writer) list(p *value, v reflect.Value) error {
	if v.IsNil() && !p.nonNull {
		w.buf.Write(null)
		return nil
	}
	if err := w.ctx.Err(); err != nil {
		return err
	}
	w.buf.WriteByte('[')
	for i := 0; i < v.Len(); i++ {
		if i > 0 {
			w.buf.WriteByte(',')
		}
		if err := w.value(p.list, v.Index(i)); err != nil {
			return err
		}
	}
	w.buf.WriteByte(']')
	return nil
}

// object writes the planned fields of row, a pointer to a struct.
func (w *writer) object(o *object, row reflect.Value) error {
	w.buf.WriteByte('{')
	for i := range o.fields {
		f := &o.fields[i]
		w.buf.Write(f.prefix)
		switch {
		case f.typename != "":
			w.buf.WriteByte('"')
			w.buf.WriteString(f.typename)
			w.buf.WriteByte('"')
		case f.load != nil:
			var got any
			if key, ok := f.key(row.Interface()); ok {
				var err error
				if got, err = w.load(f, key); err != nil {
					return errGqlgen
				}
			}
			if err := w.value(f.val, reflect.ValueOf(got)); err != nil {
				return err
			}
		default:
			fv, err := row.Elem().FieldByIndexErr(f.index)
			if err != nil {
				return errGqlgen
			}
			if err := w.value(f.val, fv); err != nil {
				return err
			}
		}
	}
	w.buf.WriteByte('}')
	return nil
}
