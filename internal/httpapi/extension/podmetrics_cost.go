package extension

import (
	"math"
	"time"

	"github.com/vektah/gqlparser/v2/ast"

	"gpugraph/internal/lib/timeseries"
	"gpugraph/internal/services/podmetrics"
	"gpugraph/models"
)

// weight is what a field costs beyond its selection: podMetrics its
// samples (podmetrics.EstimateCost: numberOfSamples × its types' series,
// or the range at the usual density when it asks every stored sample),
// so aliased podMetrics over long ranges are refused before any runs; 0
// for any other field. An argument that cannot be read (a bad date, a
// variable of the wrong type: validation or the resolver refuses it)
// counts as the most it could ask.
func (w *costWalker) weight(f *ast.Field) float64 {
	if f.Name != "podMetrics" || f.ObjectDefinition == nil || f.ObjectDefinition.Name != "Query" {
		return 0
	}
	arg := func(name string) any {
		a := f.Arguments.ForName(name)
		if a == nil || a.Value == nil {
			return nil
		}
		v, err := a.Value.Value(w.vars)
		if err != nil {
			return nil
		}
		return v
	}
	var types []string
	switch v := arg("metricTypes").(type) {
	case []any:
		for _, t := range v {
			s, _ := t.(string)
			types = append(types, s)
		}
	case string: // a single value where a list is expected
		types = []string{v}
	}
	n := podmetrics.DefaultNumberOfSamples
	switch v := arg("numberOfSamples").(type) {
	case int64:
		n = int(max(min(v, math.MaxInt32), -1))
	case int:
		n = v
	case float64:
		n = int(v)
	}
	if n < 0 || n > timeseries.MaxSamples {
		n = timeseries.MaxSamples
	}
	start, end := instant(arg("start")), instant(arg("end"))
	if n == 0 && (start.IsZero() || end.IsZero()) {
		start, end = time.Time{}, time.Time{}.Add(math.MaxInt64) // unknown: the longest range
	}
	return podmetrics.EstimateCost(types, n, start, end)
}

func instant(v any) time.Time {
	s, ok := v.(string)
	if !ok {
		return time.Time{}
	}
	t, err := models.ParseTime(s)
	if err != nil {
		return time.Time{}
	}
	return t
}
