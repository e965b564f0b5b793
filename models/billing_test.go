package models

import "testing"

// Amounts are written from the integer, exactly: no float, no exponent, no
// trailing zeros, up to six decimals of a cent.
func TestFormatCents(t *testing.T) {
	for micro, want := range map[int64]string{
		0: "0", 1: "0.000001", 6_225_000: "6.225", 2_500_000_000: "2500", -500: "-0.0005",
		-2_500_000_000: "-2500", 10_000_000_001: "10000.000001", 9_223_372_036_854_775_807: "9223372036854.775807",
		-9_223_372_036_854_775_808: "-9223372036854.775808",
	} {
		if got := FormatCents(micro); got != want {
			t.Errorf("FormatCents(%d) = %q, want %q", micro, got, want)
		}
	}
	for ms, want := range map[int64]string{0: "0", 1: "0.001", 1500: "1.5", 90_000: "90", -20: "-0.02"} {
		if got := FormatMillis(ms); got != want {
			t.Errorf("FormatMillis(%d) = %q, want %q", ms, got, want)
		}
	}
}
