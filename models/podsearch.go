package models

import (
	"strings"
	"unicode"
)

// Run:ai's free-text search matches a pod when its name, nodeName,
// workloadName or projectName contains the search text, ignoring case.
//
// The engines cannot be trusted to ignore case alike: SQLite's lower() folds
// ASCII only, PostgreSQL's folds by its locale. So case is folded here, in Go,
// on both sides: each pod row keeps SearchText, the four fields folded and
// joined by SearchSeparator, and a search compares FoldCase(text) with it
// case-sensitively (LIKE on a byte-order column). Both engines then give
// the same answer, and PostgreSQL can index the column with pg_trgm.

// SearchSeparator joins the fields in SearchText. Kubernetes names never hold
// it, so a search for text containing it matches nothing (see
// SearchableText) instead of matching across two fields.
const SearchSeparator = "\x1f"

// FoldCase maps every character to lower(upper(c)): a per-character simple
// case folding, so "É", "é" match, and so do "Σ", "σ", "ς" or "K", "k" and
// the Kelvin sign. It does not normalise: a precomposed "é" does not match
// "e" followed by a combining accent, and "ß" does not match "ss".
func FoldCase(s string) string {
	return strings.Map(func(r rune) rune { return unicode.ToLower(unicode.ToUpper(r)) }, s)
}

// PodSearchText is what SearchText holds for these fields (nil for a field
// the pod lacks).
func PodSearchText(name string, nodeName, workloadName, projectName *string) string {
	parts := []string{name, orEmpty(nodeName), orEmpty(workloadName), orEmpty(projectName)}
	for i, p := range parts {
		parts[i] = FoldCase(strings.ReplaceAll(p, SearchSeparator, " "))
	}
	return strings.Join(parts, SearchSeparator)
}

// SearchableText reports whether a search for text can match anything:
// false when it holds the separator.
func SearchableText(text string) bool { return !strings.Contains(text, SearchSeparator) }

func orEmpty(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
