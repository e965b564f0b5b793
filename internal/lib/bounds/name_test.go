package bounds

import (
	"strings"
	"testing"

	"gpugraph/internal/lib/apierr"
)

// Name refuses, with the same words, every name no agent or cluster could
// report, and takes one of MaxName bytes.
func TestName(t *testing.T) {
	if err := Name("nodeName", strings.Repeat("n", MaxName)); err != nil {
		t.Fatalf("a name of %d bytes: %v", MaxName, err)
	}
	for _, s := range []string{"", strings.Repeat("n", MaxName+1), "a b", "a\x00b", "\xff"} {
		e, ok := apierr.As(Name("nodeName", s))
		if !ok || e.Status != 400 || !strings.HasPrefix(e.Message, "nodeName ") || !strings.HasSuffix(e.Message, " must be 1 to 253 bytes of printable UTF-8 without spaces") {
			t.Errorf("Name(%q) = %v, want the 400 naming nodeName", s, e)
		}
	}
}
