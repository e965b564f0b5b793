package dataset

import (
	"fmt"

	"gpugraph/internal/store"
)

// checkInstanceTypes refuses a type with a bad name, a name twice, a
// negative number or a GPU model that is neither in the file nor in the
// catalog, naming the entry and the field.
func (c *checker) checkInstanceTypes(out *store.DataSet) error {
	gpuModels := c.newRefs("gpu_models", "gpuModelId")
	names := map[string]string{}
	for i, t := range c.f.InstanceTypes {
		row := fmt.Sprintf("instanceTypes[%d] (name %q)", i, t.Name)
		if t.Name == "" {
			row = fmt.Sprintf("instanceTypes[%d]", i)
		}
		if p := t.Problem(); p != "" {
			return refuse(row, "%s", p)
		}
		if other, dup := names[t.Name]; dup {
			return refuse(row, "name %q is already the name of %s", t.Name, other)
		}
		names[t.Name] = row
		if t.GPUModelID != nil {
			gpuModels.add(*t.GPUModelID, row)
		}
		out.InstanceTypes = append(out.InstanceTypes, t)
	}
	return c.resolve(gpuModels)
}
