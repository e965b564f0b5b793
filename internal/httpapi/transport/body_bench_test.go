package transport

import (
	"encoding/json"
	"strings"
	"testing"
)

// BenchmarkDecodeGraphQLBody prices reading the 109 KB body of
// BenchmarkRefusedLargeDocument (httpapi) alone: checked as JSON, split
// into its members and its query unquoted.
func BenchmarkDecodeGraphQLBody(b *testing.B) {
	body, _ := json.Marshal(map[string]any{"query": "{" + strings.Repeat("__typename ", 9900) + "}", "variables": map[string]any{"a": []int{1, 2, 3}}})
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, e := decodeGraphQLBody(body); e != nil {
			b.Fatal(e)
		}
	}
}
