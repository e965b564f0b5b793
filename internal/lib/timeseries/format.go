package timeseries

import (
	"math"
	"strconv"
)

// ValueDigits is the number of significant decimal digits FormatValue
// keeps.
//
// Sums and means of decimal inputs carry binary rounding error in the
// last one or two of float64's ~16 digits (0.1+0.2 is
// 0.30000000000000004). Rounding to 14 digits removes that noise with a
// margin of several times the worst error of a compensated sum over
// dozens of GPUs, while integers below 10^14 (memory byte totals up to
// 100 TB; 8 GPUs of 141 GB already need 13 digits) still print exactly.
const ValueDigits = 14

// FormatValue writes a value for the wire: rounded to ValueDigits
// significant digits, then in the shortest plain decimal form without
// exponent or trailing zeros ("85", "3.5", "0.0734"), as Prometheus's
// JSON output writes floats. NaN and infinities are written "NaN",
// "+Inf" and "-Inf" like Prometheus; negative zero is written "0".
func FormatValue(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, +1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case v == 0:
		return "0"
	}
	// Formatting to the digits and reading back rounds correctly in
	// decimal, which math.Round on a scaled value does not.
	rounded, err := strconv.ParseFloat(strconv.FormatFloat(v, 'e', ValueDigits-1, 64), 64)
	if err != nil {
		// Only possible when rounding up overflows past MaxFloat64.
		rounded = v
	}
	return strconv.FormatFloat(rounded, 'f', -1, 64)
}
