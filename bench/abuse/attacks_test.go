package abuse

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"gpugraph/podmetrics"

	"github.com/golang-jwt/jwt/v5"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

// TestAttacksCoverTheIssue holds the attack list to issue 23: every
// finding has an attack, and every attack the issue names is there, once,
// under its finding.
func TestAttacksCoverTheIssue(t *testing.T) {
	named := []struct {
		finding int
		name    string
	}{
		{1, "forged access token signed with an empty key"},
		{1, "signed with the stored key"},
		{2, "another organization's agent key on shared nodes"},
		{3, "9,900 `__typename`"},
		{3, "9,000 repeated fields"},
		{4, "1,000 distinct refused documents"},
		{5, "slow-body POSTs"},
		{5, "subscriptions sent as plain POSTs"},
		{6, "20,000 invented HTTP methods"},
		{7, "1,000 queries over one WebSocket"},
		{7, "never send `connection_init`"},
		{8, "20 aliased `podMetrics`"},
		{8, "the largest ingestion batch"},
		{9, "33,000- and 70,000-value enum lists"},
		{10, "malformed GraphQL bodies"},
		{11, "another organization's Run:ai tenant id"},
		{12, "event ids"},
		{12, "lenient parsing"},
	}
	attacks := Attacks()
	for _, n := range named {
		var found []*Attack
		for _, a := range attacks {
			if strings.Contains(a.Name, n.name) {
				found = append(found, a)
			}
		}
		if len(found) != 1 || found[0].Finding != n.finding {
			t.Errorf("%q: want one attack of finding %d, found %d", n.name, n.finding, len(found))
		}
	}
	findings := map[int]bool{}
	for i, a := range attacks {
		findings[a.Finding] = true
		if a.No != i+1 {
			t.Errorf("attack %q is number %d, in place %d", a.Name, a.No, i+1)
		}
		if a.Want == "" || a.run == nil {
			t.Errorf("attack %d has no outcome to want or nothing to run", a.No)
		}
	}
	for f := 1; f <= 12; f++ {
		if !findings[f] {
			t.Errorf("finding %d has no attack", f)
		}
	}
	if len(attacks) != len(named) {
		t.Errorf("%d attacks, the table names %d: name the new one here", len(attacks), len(named))
	}
}

func TestNoisyRequests(t *testing.T) {
	if n := noisyRequests("sqlite"); n != 100 {
		t.Errorf("SQLite: %d at once, want 100", n)
	}
	if n := noisyRequests("postgres"); n != 128 {
		t.Errorf("PostgreSQL, two replicas: %d at once, want 64 for each", n)
	}
}

// TestDocuments holds the attacks' GraphQL documents to what the findings
// describe: under the parser's token limit (else the parser refuses them
// before the work the finding measures), the sizes named.
func TestDocuments(t *testing.T) {
	parses := func(q string) bool {
		_, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: q}, 10_000)
		return err == nil
	}
	typename := typenameDocument(127)
	if len(typename) < 108_000 || len(typename) > 110_000 || !parses(typename) || typename == typenameDocument(1) {
		t.Errorf("the __typename document: %d bytes, parses under 10,000 tokens: %v", len(typename), parses(typename))
	}
	if q := repeatedDocument(127); !parses(q) || q == repeatedDocument(1) {
		t.Error("the repeated fields do not parse under 10,000 tokens, or are one document")
	}
	var a, b struct{ Query string }
	_ = json.Unmarshal(refusedDocument(1), &a)
	_ = json.Unmarshal(refusedDocument(2), &b)
	if a.Query == b.Query || !parses(a.Query) {
		t.Errorf("refused documents: distinct %v, parse under 10,000 tokens %v", a.Query != b.Query, parses(a.Query))
	}
}

func TestSignHS256(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	exp := time.Now().Add(time.Hour).Unix()
	tok := signHS256(key, map[string]any{"iss": "gpugraph", "sub": "app-1", "exp": exp})
	var c jwt.RegisteredClaims
	if _, err := jwt.ParseWithClaims(tok, &c, func(*jwt.Token) (any, error) { return key, nil }, jwt.WithValidMethods([]string{"HS256"})); err != nil {
		t.Fatalf("a token signed by hand does not verify: %v", err)
	}
	if c.Subject != "app-1" || c.ExpiresAt.Unix() != exp {
		t.Errorf("claims read back: %+v", c)
	}
	if _, err := jwt.ParseWithClaims(tok, &c, func(*jwt.Token) (any, error) { return []byte("another key, 32 bytes long......"), nil }); err == nil {
		t.Error("a token verifies with another key")
	}
}

// TestSampleBatch holds the ingestion body to its size and to the
// fixture's shape.
func TestSampleBatch(t *testing.T) {
	e := &env{fx: newFixture()}
	for _, size := range []int{256 << 10, 2 << 20} {
		b := e.sampleBatch(size)
		if len(b) < size*9/10 || len(b) > size*11/10 {
			t.Errorf("a batch of %d bytes asked is %d", size, len(b))
		}
		var batch struct {
			PodMetrics []podmetrics.MetricSeries `json:"podMetrics"`
		}
		if err := json.Unmarshal(b, &batch); err != nil {
			t.Fatalf("the batch is not JSON: %v", err)
		}
		if len(batch.PodMetrics) != 2*len(e.fx.attackerPods) || len(batch.PodMetrics[0].Samples) == 0 {
			t.Errorf("%d series for %d pods", len(batch.PodMetrics), len(e.fx.attackerPods))
		}
	}
}
