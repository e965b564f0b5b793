package abuse

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/services/podmetrics"

	"github.com/golang-jwt/jwt/v5"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

// TestAttacksCoverTheIssue holds the attack list to issues 23 and 39:
// every finding has an attack, and every attack the issues name is there,
// once, under its finding.
func TestAttacksCoverTheIssue(t *testing.T) {
	named := []struct {
		issue, finding int
		name           string
	}{
		{23, 1, "forged access token signed with an empty key"},
		{23, 1, "signed with the stored key"},
		{23, 2, "another organization's agent key on shared nodes"},
		{23, 3, "9,900 `__typename`"},
		{23, 3, "9,000 repeated fields"},
		{23, 4, "1,000 distinct refused documents"},
		{23, 5, "slow-body POSTs"},
		{23, 5, "subscriptions sent as plain POSTs"},
		{23, 6, "20,000 invented HTTP methods"},
		{23, 7, "1,000 queries over one WebSocket"},
		{23, 7, "never send `connection_init`"},
		{23, 8, "20 aliased `podMetrics`"},
		{23, 8, "the largest ingestion batch"},
		{23, 9, "33,000- and 70,000-value enum lists"},
		{23, 10, "malformed GraphQL bodies"},
		{23, 11, "another organization's Run:ai tenant id"},
		{23, 12, "event ids"},
		{23, 12, "lenient parsing"},
		{39, 1, "priority 1000 against another tenant's older pending VM"},
		{39, 2, "a NUL in a cluster sync's"},
		{39, 3, "registers project ids"},
		{39, 4, "enrolled again in upper case"},
		{39, 5, "not a UUID"},
		{39, 6, "one fresh pod id at once"},
		{39, 7, "`POST /v1/vms` sent twice with one `Idempotency-Key`"},
		{39, 8, "pending creates of one organization"},
		{39, 9, "`createVm` sent twice with one key"},
		{39, 10, "GraphQL request errors"},
	}
	attacks := Attacks()
	for _, n := range named {
		var found []*Attack
		for _, a := range attacks {
			if strings.Contains(a.Name, n.name) {
				found = append(found, a)
			}
		}
		if len(found) != 1 || found[0].Issue != n.issue || found[0].Finding != n.finding {
			t.Errorf("%q: want one attack of issue %d's finding %d, found %d", n.name, n.issue, n.finding, len(found))
		}
	}
	findings := map[[2]int]bool{}
	for i, a := range attacks {
		findings[[2]int{a.Issue, a.Finding}] = true
		if a.No != i+1 {
			t.Errorf("attack %q is number %d, in place %d", a.Name, a.No, i+1)
		}
		if a.Want == "" || a.run == nil {
			t.Errorf("attack %d has no outcome to want or nothing to run", a.No)
		}
	}
	for _, issue := range []struct{ no, findings int }{{23, 12}, {39, 10}} {
		for f := 1; f <= issue.findings; f++ {
			if !findings[[2]int{issue.no, f}] {
				t.Errorf("issue %d's finding %d has no attack", issue.no, f)
			}
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
