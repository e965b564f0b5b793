// Package demo is gpugraph's built-in demo data set: a small GPU cloud with
// one VM or pod per restartVm outcome, Run:ai pods in every phase and a day
// of pod metrics. The server loads it into an empty database at start
// (--demo) and prints its API keys; demo/README.md says what to try.
//
// demo.json is written by ./gen as of the fixed instant Anchor; JSON moves
// every instant in it so that the data set looks recent whenever it is
// loaded.
package demo

//go:generate go run ./gen -o demo.json

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Anchor is the instant demo.json was generated "as of": its newest metric
// sample, and the instant JSON moves to the present.
const Anchor = "2026-01-01T00:00:00Z"

//go:embed demo.json
var fixture []byte

var anchor = func() time.Time {
	t, err := time.Parse(time.RFC3339, Anchor)
	if err != nil {
		panic(err)
	}
	return t
}()

// JSON returns the demo fixture (docs/contract.md#fixture) with every instant moved by the
// same amount, so that Anchor falls on now truncated to the minute: the
// newest metric sample is then at most a minute old, pods created "two hours
// ago" were, and a node leaving "in three days" still is.
//
// It rewrites the instants where they stand in the text rather than
// decoding by key: that moves the instant inside a "node leaving at …"
// status reason too, and leaves every other byte exactly as generated.
func JSON(now time.Time) ([]byte, error) {
	shift := now.UTC().Truncate(time.Minute).Sub(anchor)
	out := make([]byte, 0, len(fixture))
	last := 0
	for i := 0; i < len(fixture); i++ {
		n := instantLen(fixture, i)
		if n == 0 {
			continue
		}
		s := string(fixture[i : i+n])
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return nil, fmt.Errorf("demo: instant %q: %w", s, err)
		}
		out = append(out, fixture[last:i]...)
		out = t.Add(shift).AppendFormat(out, layoutLike(s))
		i += n - 1
		last = i + 1
	}
	return append(out, fixture[last:]...), nil
}

// instantLen is the length of the instant the fixture writes at b[i:]
// (YYYY-MM-DDTHH:MM:SS, an optional fraction of up to nine digits, Z), or 0.
func instantLen(b []byte, i int) int {
	const shape = "dddd-dd-ddTdd:dd:dd"
	if len(b)-i <= len(shape) || (i > 0 && isDigit(b[i-1])) {
		return 0
	}
	for j := range len(shape) {
		if c := b[i+j]; shape[j] == 'd' && !isDigit(c) || shape[j] != 'd' && c != shape[j] {
			return 0
		}
	}
	n := len(shape)
	if b[i+n] == '.' {
		k := n + 1
		for i+k < len(b) && isDigit(b[i+k]) {
			k++
		}
		if digits := k - n - 1; digits == 0 || digits > 9 {
			return 0
		}
		n = k
	}
	if i+n >= len(b) || b[i+n] != 'Z' {
		return 0
	}
	return n + 1
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// layoutLike is the layout that writes an instant with as many fraction
// digits as s has, so "…:52.500Z" stays three digits and "…:00Z" none.
func layoutLike(s string) string {
	digits := 0
	if i := strings.IndexByte(s, '.'); i >= 0 {
		digits = len(s) - i - 2 // minus the dot and the Z
	}
	if digits == 0 {
		return "2006-01-02T15:04:05Z07:00"
	}
	return "2006-01-02T15:04:05." + strings.Repeat("0", digits) + "Z07:00"
}

// KeyInfo is one API key of the demo, for the server to print at start.
type KeyInfo struct {
	Token          string
	OrganizationID string
	Organization   string // the organization's name
	TenantID       int
	Permissions    []string
}

// Keys lists the demo's API keys in the order of the fixture.
func Keys() []KeyInfo {
	keys, err := parseKeys()
	if err != nil {
		// demo.json is embedded and its tests parse it; failing here means
		// the binary was built from a broken checkout.
		panic(err)
	}
	out := make([]KeyInfo, len(keys))
	for i, k := range keys {
		k.Permissions = append([]string(nil), k.Permissions...)
		out[i] = k
	}
	return out
}

var parseKeys = sync.OnceValues(func() ([]KeyInfo, error) {
	var f struct {
		Organizations []struct {
			ID       string `json:"id"`
			Name     string `json:"name"`
			TenantID int    `json:"tenantId"`
		} `json:"organizations"`
		APIKeys []struct {
			Token          string   `json:"token"`
			OrganizationID string   `json:"organizationId"`
			Permissions    []string `json:"permissions"`
		} `json:"apiKeys"`
	}
	if err := json.Unmarshal(fixture, &f); err != nil {
		return nil, fmt.Errorf("demo: demo.json: %w", err)
	}
	var keys []KeyInfo
	for _, k := range f.APIKeys {
		info := KeyInfo{Token: k.Token, OrganizationID: k.OrganizationID, Permissions: k.Permissions}
		for _, o := range f.Organizations {
			if o.ID == k.OrganizationID {
				info.Organization, info.TenantID = o.Name, o.TenantID
			}
		}
		keys = append(keys, info)
	}
	return keys, nil
})
