package agent

import (
	"fmt"
	"strconv"
	"strings"
)

// NormalizeBusID turns a PCI address as NVML prints it ("00000000:3B:00.0",
// eight-digit domain) or in the legacy form ("0000:3b:00.0") into the one
// spelling the server keys GPUs on: "0000:3B:00.0", upper-case hex with a
// four-digit domain. A domain that does not fit in four digits keeps its
// extra digits rather than being truncated, as Linux's sysfs does.
func NormalizeBusID(s string) (string, error) {
	s = strings.TrimSpace(strings.TrimRight(s, "\x00"))
	domain, rest, ok := strings.Cut(s, ":")
	if !ok {
		return "", fmt.Errorf("PCI bus id %q: want domain:bus:device.function", s)
	}
	bus, rest, ok := strings.Cut(rest, ":")
	if !ok {
		return "", fmt.Errorf("PCI bus id %q: want domain:bus:device.function", s)
	}
	dev, fn, ok := strings.Cut(rest, ".")
	if !ok {
		return "", fmt.Errorf("PCI bus id %q: want domain:bus:device.function", s)
	}

	d, err := parseHexField(s, "domain", domain, 1, 8)
	if err != nil {
		return "", err
	}
	b, err := parseHexField(s, "bus", bus, 2, 2)
	if err != nil {
		return "", err
	}
	v, err := parseHexField(s, "device", dev, 2, 2)
	if err != nil {
		return "", err
	}
	f, err := parseHexField(s, "function", fn, 1, 1)
	if err != nil {
		return "", err
	}
	// PCI allows 32 devices per bus and 8 functions per device; anything
	// else means the string is not an address at all.
	if v > 0x1f {
		return "", fmt.Errorf("PCI bus id %q: device %#x out of range", s, v)
	}
	if f > 7 {
		return "", fmt.Errorf("PCI bus id %q: function %d out of range", s, f)
	}
	return fmt.Sprintf("%04X:%02X:%02X.%X", d, b, v, f), nil
}

func parseHexField(whole, name, field string, minLen, maxLen int) (uint64, error) {
	if len(field) < minLen || len(field) > maxLen {
		return 0, fmt.Errorf("PCI bus id %q: %s %q must be %d to %d hex digits", whole, name, field, minLen, maxLen)
	}
	for _, c := range field {
		if !isHexDigit(c) {
			return 0, fmt.Errorf("PCI bus id %q: %s %q is not hex", whole, name, field)
		}
	}
	return strconv.ParseUint(field, 16, 64)
}

// isHexDigit keeps the accepted alphabet explicit rather than leaning on
// strconv's rules about prefixes and separators.
func isHexDigit(c rune) bool {
	return ('0' <= c && c <= '9') || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}
