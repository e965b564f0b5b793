package extension

import (
	"unicode/utf8"

	"github.com/vektah/gqlparser/v2/lexer"
)

// scanFields is lexFields read off the bytes of s: the same tokens as
// gqlparser's lexer (lexer.go of gqlparser v2, rule for rule: white space,
// commas and byte order marks, comments, punctuators, names, numbers,
// strings with their escapes, block strings), the same count, without a
// token's value or position made for each. A document of 2,001 fields
// refused by its count is 22 KB of names: the lexer spent 0.27 ms on them
// (a rune decoded per byte, a Token built per name), this a tenth of it.
//
// It stops, ok=false, where the lexer would fail to read a token (an
// unexpected character, a malformed number, string or escape), with the
// count the lexer has there: the parser then refuses the document at that
// token. FuzzScanFields holds the two equal on every text, gqlparser's
// lexer the reference (lexFields, in the tests).
func scanFields(s string, max, tokens int) (n int, ok bool) {
	counter := fieldCounter{max: max, tokens: tokens}
	i := 0
	for {
		i = skipIgnored(s, i)
		if i >= len(s) {
			return counter.n, true // EOF
		}
		kind, isOn := lexer.Invalid, false
		c := s[i]
		switch {
		case nameStart[c]:
			j := i + 1
			for j < len(s) && nameByte[s[j]] {
				j++
			}
			kind, isOn = lexer.Name, j-i == 2 && s[i] == 'o' && s[i+1] == 'n'
			i = j
		case c == '-' || c >= '0' && c <= '9':
			j, ok := scanNumber(s, i)
			if !ok {
				return counter.n, false
			}
			kind, i = lexer.Int, j // Int or Float: neither counts
		case c == '"':
			var j int
			if i+2 < len(s) && s[i+1] == '"' && s[i+2] == '"' {
				j = scanBlockString(s, i+3)
			} else {
				j = scanString(s, i+1)
			}
			if j < 0 {
				return counter.n, false
			}
			kind, i = lexer.String, j
		case c == '.':
			if i+2 >= len(s) || s[i+1] != '.' || s[i+2] != '.' {
				return counter.n, false
			}
			kind, i = lexer.Spread, i+3
		default:
			kind = punctuator[c]
			if kind == lexer.Invalid {
				return counter.n, false
			}
			i++
		}
		if counter.stop(kind, isOn) {
			return counter.n, true
		}
	}
}

// skipIgnored skips what the lexer reads between tokens: white space,
// commas, line ends, a whole byte order mark, and comments (which
// countFields passes over).
func skipIgnored(s string, i int) int {
	for i < len(s) {
		switch s[i] {
		case ' ', '\t', ',', '\n', '\r':
			i++
		case 0xef:
			// As the lexer: a mark that ends the document is not skipped
			// (and then cannot be read).
			if i+2 >= len(s) || s[i+1] != 0xbb || s[i+2] != 0xbf {
				return i
			}
			i += 3
		case '#':
			// To the first control character but a tab: the lexer decodes
			// runes here, and every byte of one past ASCII (or of an
			// invalid sequence) reads as more than U+001F.
			i++
			for i < len(s) && (s[i] >= 0x20 || s[i] == '\t') {
				i++
			}
		default:
			return i
		}
	}
	return i
}

// scanNumber reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? from
// s[i:] as the lexer's readNumber does (nothing is required after it).
func scanNumber(s string, i int) (int, bool) {
	if s[i] == '-' {
		i++
	}
	if i < len(s) && s[i] == '0' {
		i++
		if i < len(s) && isDigit(s[i]) {
			return 0, false
		}
	} else if i = digits(s, i); i < 0 {
		return 0, false
	}
	if i < len(s) && s[i] == '.' {
		if i = digits(s, i+1); i < 0 {
			return 0, false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i = digits(s, i); i < 0 {
			return 0, false
		}
	}
	return i, true
}

// digits reads one digit or more from s[i:]: where they end, or -1.
func digits(s string, i int) int {
	j := i
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// scanString reads a string's content from s[i:] (after its opening
// quote) as the lexer's readString does: where it ends past its closing
// quote, or -1 where the lexer fails (a line end, a control character, a
// malformed escape, no closing quote). A byte past ASCII never ends it:
// the lexer decodes it as a rune that is no quote, backslash or control.
func scanString(s string, i int) int {
	for i < len(s) {
		c := s[i]
		switch {
		case c == '"':
			return i + 1
		case c == '\\':
			if i+1 >= len(s) {
				return -1
			}
			switch s[i+1] {
			case '"', '/', '\\', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				j := unicodeEscape(s, i)
				if j < 0 {
					return -1
				}
				i = j
			default:
				return -1
			}
		case c < 0x20 && c != '\t':
			return -1 // a line end too: the string is not terminated
		default:
			i++
		}
	}
	return -1
}

// unicodeEscape reads the \u escape at s[i:] as readString does: braced
// (\u{1F600}) or four hex digits, a leading surrogate with the escaped
// trailing one that follows it; where it ends, or -1.
func unicodeEscape(s string, i int) int {
	if i+2 < len(s) && s[i+2] == '{' {
		j := i + 3
		v, digits := rune(0), 0
		for ; j < len(s) && s[j] != '}'; j++ {
			d, ok := hexValue(s[j])
			if !ok || digits == 8 {
				return -1
			}
			v, digits = v<<4|d, digits+1
		}
		if j >= len(s) || digits == 0 || !utf8.ValidRune(v) {
			return -1
		}
		return j + 1
	}
	if i+6 >= len(s) {
		return -1
	}
	r, ok := hex4(s[i+2 : i+6])
	if !ok {
		return -1
	}
	i += 6
	if r >= 0xD800 && r < 0xDC00 && i+6 < len(s) && s[i] == '\\' && s[i+1] == 'u' {
		if r2, ok := hex4(s[i+2 : i+6]); ok && r2 >= 0xDC00 && r2 <= 0xDFFF {
			i += 6
		}
	}
	return i
}

func hex4(s string) (rune, bool) {
	var v rune
	for i := range 4 {
		d, ok := hexValue(s[i])
		if !ok {
			return 0, false
		}
		v = v<<4 | d
	}
	return v, true
}

func hexValue(c byte) (rune, bool) {
	switch {
	case c >= '0' && c <= '9':
		return rune(c - '0'), true
	case c >= 'a' && c <= 'f':
		return rune(c-'a') + 10, true
	case c >= 'A' && c <= 'F':
		return rune(c-'A') + 10, true
	}
	return 0, false
}

// scanBlockString reads a block string's content from s[i:] (after its
// opening quotes) as readBlockString does: it ends at the first run of
// three quotes or more (all of them), \""" is a quote run of its own, a
// control character but tab and line ends fails; -1 where it fails or
// does not end.
func scanBlockString(s string, i int) int {
	for i < len(s) {
		c := s[i]
		if c == '"' {
			j := i + 1
			for j < len(s) && s[j] == '"' {
				j++
			}
			if j-i >= 3 {
				return j
			}
		}
		switch {
		case c < 0x20 && c != '\t' && c != '\n' && c != '\r':
			return -1
		case c == '\\' && i+4 <= len(s) && s[i+1:i+4] == `"""`:
			i += 4
		default:
			i++
		}
	}
	return -1
}

// The bytes that start a name, continue one, and the punctuators of one
// byte (lexer.Invalid: none).
var nameStart, nameByte [256]bool
var punctuator [256]lexer.Type

func init() {
	for c := 0; c < 256; c++ {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
		nameStart[c] = letter
		nameByte[c] = letter || c >= '0' && c <= '9'
	}
	for c, k := range map[byte]lexer.Type{
		'!': lexer.Bang, '$': lexer.Dollar, '&': lexer.Amp, '(': lexer.ParenL, ')': lexer.ParenR,
		':': lexer.Colon, '=': lexer.Equals, '@': lexer.At, '[': lexer.BracketL, ']': lexer.BracketR,
		'{': lexer.BraceL, '}': lexer.BraceR, '|': lexer.Pipe,
	} {
		punctuator[c] = k
	}
}
