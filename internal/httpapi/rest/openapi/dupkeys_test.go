package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// Neither source names a member twice in one object: encoding/json (and
// the merge patch) would keep the last silently, so a merge that added a
// response on both sides would lose one without a word.
func TestNoMemberTwice(t *testing.T) {
	for name, b := range map[string][]byte{"gpugraph.json": gpugraphSource, "runai-pods-openapi.json": runaiSource} {
		if err := noDuplicateMembers(b); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := noDuplicateMembers([]byte(`{"a": {"402": 1, "b": [{"x": 1}], "402": 2}}`)); err == nil ||
		err.Error() != `/a names "402" twice` {
		t.Errorf("a document naming 402 twice: %v, want it named", err)
	}
}

// noDuplicateMembers walks a JSON document's tokens and names the first
// object member that appears twice, by its path.
func noDuplicateMembers(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	var walk func(path string) error
	walk = func(path string) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				key := k.(string)
				if seen[key] {
					return fmt.Errorf("%s names %q twice", path, key)
				}
				seen[key] = true
				if err := walk(path + "/" + strings.ReplaceAll(key, "/", "~1")); err != nil {
					return err
				}
			}
			_, err = dec.Token() // }
			return err
		case json.Delim('['):
			for i := 0; dec.More(); i++ {
				if err := walk(fmt.Sprintf("%s/%d", path, i)); err != nil {
					return err
				}
			}
			_, err = dec.Token() // ]
			return err
		}
		return nil
	}
	return walk("")
}
