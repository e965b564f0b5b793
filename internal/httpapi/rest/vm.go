package rest

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"time"

	"gpugraph/internal/lib/rowfield"
	"gpugraph/internal/services/compute"
	"gpugraph/models"
)

// vmJSON is OpenRelay's VM object as the seed writes it (every field of the
// restart answer, camelCase, status in lower case), plus the node, GPUs,
// host share, tearingDown and interruptedAt: the VM field registry's keys
// (rowfield.VM), the seed's in key order, then gpugraph's own in the
// registry's order. Instants are RFC 3339 UTC with milliseconds. On a
// CPU-only row gpuManufacturer is absent, as the seed says, and so are
// gpuModelId and gpuModelName: the seed types them as strings, so null is
// not theirs to write, and absent is how the seed marks "no GPU"
// (docs/decisions/0016-cpu-only-vms.md).
type vmJSON struct{ res *compute.Result }

// encodeVM renders a restarted VM with the GPUs and model the restart read.
func encodeVM(res *compute.Result) vmJSON { return vmJSON{res} }

// vmOrder is the order the REST VM object writes the registry's fields in.
var vmOrder = objectOrder(rowfield.VM)

// objectOrder is reg's fields in the REST object's order: the seed's keys
// sorted, then the others in the registry's order; fields no face writes
// left out.
func objectOrder[T any](reg *rowfield.Registry[T]) []rowfield.Field[T] {
	var seed, own []rowfield.Field[T]
	for _, f := range reg.All() {
		switch {
		case f.Key == "":
		case f.Seed:
			seed = append(seed, f)
		default:
			own = append(own, f)
		}
	}
	slices.SortFunc(seed, func(a, b rowfield.Field[T]) int { return strings.Compare(a.Key, b.Key) })
	return append(seed, own...)
}

func (o vmJSON) MarshalJSON() ([]byte, error) {
	vm, gpus, m := o.res.VM, o.res.GPUs, o.res.Model
	return writeObject(vmOrder, vm, func(key string) any {
		switch key {
		case "gpuIds":
			ids := make([]string, 0, len(gpus))
			for _, g := range gpus {
				ids = append(ids, g.ID)
			}
			return ids
		case "gpuManufacturer":
			if vm.GPUModelID != nil && m != nil {
				return string(m.Manufacturer)
			}
		case "gpuModelName":
			if vm.GPUModelID != nil && m != nil {
				return m.Name
			}
		}
		return nil
	})
}

// writeObject writes row's fields as a JSON object, in order: a column's
// value as its Go field holds it (an instant as models.FormatTime writes
// it, a nil pointer as null), a derived field's as derived answers it
// (nil: null); a null OmitNull field is left out.
func writeObject[T any](order []rowfield.Field[T], row *T, derived func(key string) any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	b.WriteByte('{')
	first := true
	for _, f := range order {
		var v any
		if f.Into != nil {
			v = jsonValue(reflect.ValueOf(f.Into(row)).Elem())
		} else {
			v = derived(f.Key)
		}
		if v == nil && f.OmitNull {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		if err := enc.Encode(f.Key); err != nil {
			return nil, err
		}
		b.Truncate(b.Len() - 1) // Encode's newline
		b.WriteByte(':')
		if err := enc.Encode(v); err != nil {
			return nil, err
		}
		b.Truncate(b.Len() - 1)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

var timeType = reflect.TypeFor[time.Time]()

// jsonValue is what the REST object writes for a Go field's value: nil
// for a nil pointer, an instant formatted, anything else as it is.
func jsonValue(v reflect.Value) any {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	if v.Type() == timeType {
		return models.FormatTime(v.Interface().(time.Time))
	}
	return v.Interface()
}
