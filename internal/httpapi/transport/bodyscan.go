package transport

import (
	"bytes"
	"encoding/binary"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// splitBody is scanJSON's split of a body that is one JSON object,
// checked and split in one pass of its own over the bytes: the same
// members, held to the same rules (RFC 8259 with no name twice in an
// object and valid UTF-8, at most maxBodyDepth deep, nothing after it but
// white space), strings read eight bytes at a time. jsontext reads a
// string byte by byte, and checks it again where it is unquoted: the 109
// KB document of the hostile-tenants issue cost 0.35 ms of CPU in those
// two passes, a third of its refusal.
//
// ok=false is every body it does not read through: not an object, not
// valid, or what it leaves to jsontext rather than decode itself (a name
// with an escape, an escaped surrogate). scanJSON then reads the body and
// names what is wrong in its words, so an answer never depends on which
// of the two read it (FuzzSplitBody holds the two equal).
func splitBody(b []byte) (top map[string]jsontext.Value, ok bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false
	}
	var end int
	end, ok = scanObject(b, i, 1, func(name []byte, value []byte) {
		if top == nil {
			top = make(map[string]jsontext.Value, 4)
		}
		top[string(name)] = value
	})
	if !ok || skipSpace(b, end) != len(b) {
		return nil, false
	}
	return top, true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// scanValue reads the JSON value at b[i:], inside depth containers:
// where it ends, or ok=false.
func scanValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch c := b[i]; {
	case c == '"':
		end, _ := scanString(b, i)
		return end, end > 0
	case c == '{':
		return scanObject(b, i, depth+1, nil)
	case c == '[':
		return scanArray(b, i, depth+1)
	case c == 't':
		return literal(b, i, "true")
	case c == 'f':
		return literal(b, i, "false")
	case c == 'n':
		return literal(b, i, "null")
	case c == '-' || c >= '0' && c <= '9':
		return scanNumber(b, i)
	}
	return 0, false
}

func literal(b []byte, i int, word string) (int, bool) {
	if len(b)-i < len(word) || string(b[i:i+len(word)]) != word {
		return 0, false
	}
	return i + len(word), true
}

// scanObject reads the object at b[i:] (its opening brace), the depth-th
// container, handing each member to member when it is not nil.
func scanObject(b []byte, i, depth int, member func(name, value []byte)) (int, bool) {
	if depth > maxBodyDepth {
		return 0, false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	// The names seen, to refuse one twice; few, so compared in a list up
	// to a point, then in a set.
	var names [][]byte
	var set map[string]struct{}
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, false
		}
		end, plain := scanString(b, i)
		if end < 0 || !plain {
			return 0, false // an escaped name is compared unescaped: jsontext's
		}
		name := b[i+1 : end-1]
		if set != nil {
			if _, dup := set[string(name)]; dup {
				return 0, false
			}
			set[string(name)] = struct{}{}
		} else {
			for _, n := range names {
				if string(n) == string(name) {
					return 0, false
				}
			}
			if names = append(names, name); len(names) > 16 {
				set = make(map[string]struct{}, 2*len(names))
				for _, n := range names {
					set[string(n)] = struct{}{}
				}
			}
		}
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return 0, false
		}
		i = skipSpace(b, i+1)
		from := i
		var ok bool
		if i, ok = scanValue(b, i, depth); !ok {
			return 0, false
		}
		if member != nil {
			member(name, b[from:i])
		}
		var done bool
		if i, done, ok = separator(b, i, '}'); !ok || done {
			return i, ok
		}
	}
}

// separator reads what follows a member or an element: a comma (and the
// white space after it), or the container's close; where the next one
// starts, or where the container ends (done).
func separator(b []byte, i int, close byte) (next int, done, ok bool) {
	i = skipSpace(b, i)
	switch {
	case i >= len(b):
		return 0, false, false
	case b[i] == ',':
		return skipSpace(b, i+1), false, true
	case b[i] == close:
		return i + 1, true, true
	}
	return 0, false, false
}

// scanArray reads the array at b[i:] (its opening bracket), the depth-th
// container.
func scanArray(b []byte, i, depth int) (int, bool) {
	if depth > maxBodyDepth {
		return 0, false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, true
	}
	for {
		var ok, done bool
		if i, ok = scanValue(b, i, depth); !ok {
			return 0, false
		}
		if i, done, ok = separator(b, i, ']'); !ok || done {
			return i, ok
		}
	}
}

// scanNumber reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func scanNumber(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digitsEnd(b, i)
	default:
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		j := digitsEnd(b, i+1)
		if j == i+1 {
			return 0, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digitsEnd(b, i)
		if j == i {
			return 0, false
		}
		i = j
	}
	return i, true
}

func digitsEnd(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// Eight bytes at once: ones has 1 in each byte, highs each byte's top bit.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// plainWord is whether none of the eight bytes of x needs a look of its
// own inside a string: a control character, a backslash, or a byte past
// ASCII (each test exact as to whether any byte is one).
func plainWord(x uint64) bool {
	backslash := x ^ (ones * '\\')
	control := (x - ones*0x20) &^ x
	return (control|(backslash-ones)&^backslash|x)&highs == 0
}

// scanString reads the string at b[i:] (its opening quote) as jsontext
// accepts it: no control character, valid escapes, valid UTF-8; where it
// ends past its closing quote, and whether it holds no escape (its bytes
// are then its value), or -1. It leaves an escaped surrogate to jsontext
// (-1), which holds a pair of them to the rules of UTF-16.
//
// The closing quote is found first (bytes.IndexByte, vectorised), then
// what lies before it is checked eight bytes at a time; an escaped quote
// sends it on to the next.
func scanString(b []byte, i int) (end int, plain bool) {
	j, plain := i+1, true
	for {
		q := bytes.IndexByte(b[j:], '"')
		if q < 0 {
			return -1, false
		}
		stop := j + q
		for j < stop {
			for j+8 <= stop && plainWord(binary.LittleEndian.Uint64(b[j:])) {
				j += 8
			}
			if j >= stop {
				break
			}
			switch c := b[j]; {
			case c == '\\':
				plain = false
				if j+1 >= len(b) {
					return -1, false
				}
				switch b[j+1] {
				case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
					j += 2
				case 'u':
					if j+6 > len(b) {
						return -1, false
					}
					v, ok := hex4(b[j+2 : j+6])
					if !ok || v >= 0xD800 && v <= 0xDFFF {
						return -1, false
					}
					j += 6
				default:
					return -1, false
				}
			case c < 0x20:
				return -1, false
			case c < utf8.RuneSelf:
				j++
			default:
				// A valid sequence is bytes past ASCII only: it ends
				// before the quote.
				r, size := utf8.DecodeRune(b[j:stop])
				if r == utf8.RuneError && size == 1 {
					return -1, false
				}
				j += size
			}
		}
		if j == stop {
			return stop + 1, plain
		}
		// An escape took the quote found (\"): on to the next one.
	}
}

func hex4(b []byte) (rune, bool) {
	var v rune
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return v, true
}
