package models

import (
	"encoding/json"
	"regexp"
	"strings"
)

// QuantityPattern is the Run:ai schema's pattern for quantities
// (Kubernetes quantities: "200M", "2Gi", "0").
var QuantityPattern = regexp.MustCompile(`^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$`)

// NormalizeQuantity drops a trailing byte unit "B" from a quantity that is
// valid without it: the seed's own example writes "0B", which its schema's
// pattern refuses; Kubernetes quantities are bytes already, so "0B" is "0"
// and "200MiB" is "200Mi". Anything else is kept as written.
func NormalizeQuantity(s *string) *string {
	if s == nil {
		return nil
	}
	if t, ok := strings.CutSuffix(*s, "B"); ok && QuantityPattern.MatchString(t) {
		return &t
	}
	return s
}

// UnmarshalJSON reads limit and request, normalised (see NormalizeQuantity).
func (q *RequestResourceQuantity) UnmarshalJSON(b []byte) error {
	type plain RequestResourceQuantity
	if err := json.Unmarshal(b, (*plain)(q)); err != nil {
		return err
	}
	q.Limit, q.Request = NormalizeQuantity(q.Limit), NormalizeQuantity(q.Request)
	return nil
}

// UnmarshalJSON reads the allocation, memory quantities normalised (see
// NormalizeQuantity).
func (a *AllocatedResources) UnmarshalJSON(b []byte) error {
	type plain AllocatedResources
	if err := json.Unmarshal(b, (*plain)(a)); err != nil {
		return err
	}
	a.GPUMemory, a.CPUMemory = NormalizeQuantity(a.GPUMemory), NormalizeQuantity(a.CPUMemory)
	return nil
}
