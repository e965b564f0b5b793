package abuse

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"golang.org/x/time/rate"

	"gpugraph/models"
)

// bomb sends query(0) alone, then floods query(1), query(2), … while the
// victim queries; every answer must be a 400 refusal. Each request's
// document is its own (an operation name of its own), as an attacker's
// would be: the same document again would be answered from the query
// cache.
func (e *env) bomb(ctx context.Context, r *Result, query func(i int) string) error {
	send := func(ctx context.Context, i int) {
		body, _ := json.Marshal(map[string]string{"query": query(i)})
		status, _, err := e.do(ctx, i, http.MethodPost, "/graphql", ReaderKey, body)
		r.Statuses.Add(answer(status, err))
	}
	if err := e.alone(ctx, r, 1, send); err != nil {
		return err
	}
	err := e.flood(ctx, r, noisyRequests(e.engine), send)
	r.OK = r.Statuses.OnlyOrHeldBack("400")
	return err
}

// typenameDocument is finding 3's 109 KB document: 9,900 __typename
// fields, under the parser's token limit, each pair compared by
// validation.
func typenameDocument(i int) string {
	return fmt.Sprintf("query Q%d {", i) + strings.Repeat(" __typename", 9900) + " }"
}

// repeatedDocument is 9,000 copies of one field in one selection.
func repeatedDocument(i int) string {
	return fmt.Sprintf("query Q%d { vms { vms {", i) + strings.Repeat(" id", 9000) + " } } }"
}

func typenameBomb(ctx context.Context, e *env, r *Result) error {
	return e.bomb(ctx, r, typenameDocument)
}

func repeatedFields(ctx context.Context, e *env, r *Result) error {
	return e.bomb(ctx, r, repeatedDocument)
}

// refusedDocument is the i-th of finding 4's documents: 3,000 aliases,
// distinct from every other i, over the alias and root-field caps.
func refusedDocument(i int) []byte {
	var b strings.Builder
	b.WriteString("{")
	for j := 0; j < 3000; j++ {
		fmt.Fprintf(&b, " a%d_%d: __typename", i, j)
	}
	b.WriteString(" }")
	body, _ := json.Marshal(map[string]string{"query": b.String()})
	return body
}

// refusedDocuments sends 1,000 distinct refused documents at the pace the
// rate limit allows (finding 4) and reads the heap they leave behind.
func refusedDocuments(ctx context.Context, e *env, r *Result) error {
	send := func(ctx context.Context, i int) {
		status, _, err := e.do(ctx, i, http.MethodPost, "/graphql", ReaderKey, refusedDocument(i))
		r.Statuses.Add(answer(status, err))
	}
	if err := e.alone(ctx, r, 1, send); err != nil {
		return err
	}
	if err := e.ready(ctx); err != nil {
		return err
	}
	before, err := e.retainedHeap(ctx)
	if err != nil {
		return err
	}
	const docs = 1000
	// Under the key's API rate limit (50/s, burst 100, for the whole
	// deployment); the box is what that pace takes, and some.
	pace := rate.NewLimiter(KeyPace, KeyBurst)
	box := e.cfg.Box + time.Duration(docs-KeyBurst)*time.Second/KeyPace
	next := make(chan int)
	err = e.setWithin(ctx, box, r, docs, 4, func(ctx context.Context) {
		go func() {
			defer close(next)
			for i := 1; i <= docs; i++ {
				if pace.Wait(ctx) != nil {
					return
				}
				next <- i
			}
		}()
		parallel(4, func(int) {
			for i := range next {
				send(ctx, i)
			}
		})
	})
	if err != nil {
		return err
	}
	after, err := e.retainedHeap(ctx)
	if err != nil {
		return err
	}
	kept := after - before
	r.Retained = &kept
	r.OK = r.Statuses.OnlyOrHeldBack("400") && r.Statuses.Total() == docs+1
	return nil
}

// subscriptionPosts sends a subscription as a plain POST (finding 5),
// as a flood while the victim queries: each must be refused at once.
func subscriptionPosts(ctx context.Context, e *env, r *Result) error {
	body, _ := json.Marshal(map[string]string{"query": "subscription { vmEvents { id } }"})
	err := e.flood(ctx, r, noisyRequests(e.engine), func(ctx context.Context, i int) {
		start := time.Now()
		status, _, err := e.do(ctx, i, http.MethodPost, "/graphql", ReaderKey, body, "Accept", "application/json")
		key := answer(status, err)
		if err == nil && time.Since(start) > 2*time.Second {
			key += " after 2 s"
		}
		r.Statuses.Add(key)
	})
	r.OK = r.Statuses.OnlyOrHeldBack("400")
	return err
}

// podMetricsTypes are the 19 GPU and CPU types a pod can have.
var podMetricsTypes = []string{
	"GPU_UTILIZATION_PER_GPU", "GPU_UTILIZATION", "GPU_MEMORY_USAGE_BYTES_PER_GPU", "GPU_MEMORY_USAGE_BYTES",
	"CPU_USAGE_CORES", "CPU_MEMORY_USAGE_BYTES", "GPU_GRAPHICS_ENGINE_ACTIVITY_PER_GPU", "GPU_SM_ACTIVITY_PER_GPU",
	"GPU_SM_OCCUPANCY_PER_GPU", "GPU_TENSOR_ACTIVITY_PER_GPU", "GPU_FP64_ENGINE_ACTIVITY_PER_GPU", "GPU_FP32_ENGINE_ACTIVITY_PER_GPU",
	"GPU_FP16_ENGINE_ACTIVITY_PER_GPU", "GPU_MEMORY_BANDWIDTH_UTILIZATION_PER_GPU", "GPU_NVLINK_TRANSMITTED_BANDWIDTH_PER_GPU",
	"GPU_NVLINK_RECEIVED_BANDWIDTH_PER_GPU", "GPU_PCIE_TRANSMITTED_BANDWIDTH_PER_GPU", "GPU_PCIE_RECEIVED_BANDWIDTH_PER_GPU",
	"GPU_SWAP_MEMORY_BYTES_PER_GPU",
}

// aliasedPodMetrics is finding 8's 20 aliases of podMetrics over the
// attacker's own pod: every type, 1,000 samples, the hour it has data.
func aliasedPodMetrics(ctx context.Context, e *env, r *Result) error {
	fx := e.fx
	var b strings.Builder
	b.WriteString("{")
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&b, ` m%d: podMetrics(workloadId: %q, podId: %q, metricTypes: [%s], start: %q, end: %q, numberOfSamples: 1000) { measurements { type labels values { timestamp value } } }`,
			i, fx.metricsPod.WorkloadID, fx.metricsPod.ID, strings.Join(podMetricsTypes, ", "),
			models.FormatTime(fx.metricsStart), models.FormatTime(fx.metricsEnd))
	}
	b.WriteString(" }")
	doc := b.String()
	send := func(ctx context.Context, i int) {
		// A document of its own each time, as in bomb.
		body, _ := json.Marshal(map[string]string{"query": fmt.Sprintf("query Q%d ", i) + doc})
		status, resp, err := e.do(ctx, i, http.MethodPost, "/graphql", ReaderKey, body)
		key := answer(status, err)
		if code, _ := gqlCode(resp); code != "" {
			key += " " + code
		}
		r.Statuses.Add(key)
	}
	if err := e.alone(ctx, r, 1, send); err != nil {
		return err
	}
	err := e.flood(ctx, r, noisyRequests(e.engine), send)
	// A refusal must come before the work: RESPONSE_TOO_LARGE is a 400
	// too, but only once the answer was made.
	r.OK = r.Statuses.OnlyOrHeldBack("200", "400 BAD_REQUEST")
	return err
}

// enumLists sends status lists of 33,000 and 70,000 values (over SQLite's
// and PostgreSQL's bound parameters) as variables, past the token limit
// (finding 9).
func enumLists(ctx context.Context, e *env, r *Result) error {
	type call struct {
		name, query, value string
		n                  int
	}
	var calls []call
	for _, n := range []int{33000, 70000} {
		calls = append(calls,
			call{"vms", `query($s: [VmStatus!]) { vms(status: $s) { total } }`, "RUNNING", n},
			call{"nodes", `query($s: [NodeStatus!]) { nodes(status: $s) { id } }`, "ONLINE", n})
	}
	var wrong []string
	err := e.alone(ctx, r, len(calls), func(ctx context.Context, i int) {
		c := calls[i]
		vals := make([]string, c.n)
		for j := range vals {
			vals[j] = c.value
		}
		status, body, err := e.graphql(ctx, i, ReaderKey, c.query, map[string]any{"s": vals})
		code, msg := gqlCode(body)
		key := answer(status, err)
		if code != "" {
			key += " " + code
		}
		r.Statuses.Add(key)
		if err != nil || (code == "" && status != http.StatusOK) || (code != "" && (code != "BAD_REQUEST" || !strings.Contains(msg, "status"))) {
			wrong = append(wrong, fmt.Sprintf("%s(%d values): %s %q", c.name, c.n, key, msg))
		}
	})
	if len(wrong) > 0 {
		r.Outcome = strings.Join(wrong, "; ")
	}
	r.OK = len(wrong) == 0
	return err
}

// chunked is a body whose length is not known: it goes chunked.
type chunked struct{ io.Reader }

// malformedBodies sends finding 10's bodies, each with its answer's
// status and extensions.code checked, and counts what the servers logged
// at level ERROR or as a panic meanwhile.
func malformedBodies(ctx context.Context, e *env, r *Result) error {
	const q = `{ vms { total } }`
	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	cases := []struct {
		name string
		body func() io.Reader
		want int
	}{
		{"truncated JSON", func() io.Reader { return strings.NewReader(`{"query": "` + q + `"`) }, 400},
		{"non-string query", func() io.Reader { return strings.NewReader(`{"query": 5}`) }, 400},
		{"variables array", func() io.Reader { return strings.NewReader(`{"query": "` + q + `", "variables": [1]}`) }, 400},
		{"deep nesting", func() io.Reader { return strings.NewReader(`{"query": "` + q + `", "variables": {"a": ` + deep + `}}`) }, 400},
		{"10 MB chunked", func() io.Reader {
			return chunked{io.MultiReader(strings.NewReader(`{"query": "`+q+`", "variables": {"pad": "`),
				bytes.NewReader(bytes.Repeat([]byte("x"), 10<<20)), strings.NewReader(`"}}`))}
		}, 413},
	}
	offsets := e.logOffsets()
	var wrong []string
	err := e.alone(ctx, r, len(cases), func(ctx context.Context, i int) {
		c := cases[i]
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.base(i)+"/graphql", c.body())
		if err != nil {
			return
		}
		req.Header.Set("Authorization", "Bearer "+ReaderKey)
		req.Header.Set("Content-Type", "application/json")
		status, body := 0, []byte(nil)
		resp, err := e.http.Do(req)
		if err == nil {
			status = resp.StatusCode
			body, _ = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			resp.Body.Close()
		}
		code, _ := gqlCode(body)
		key := answer(status, err)
		if code != "" {
			key += " " + code
		}
		r.Statuses.Add(key)
		if err != nil || status != c.want || code == "" || code == "INTERNAL" {
			wrong = append(wrong, fmt.Sprintf("%s: %s %s", c.name, answer(status, err), orDash(code)))
		}
	})
	if n := e.logErrors(offsets); n > 0 {
		wrong = append(wrong, fmt.Sprintf("%d ERROR or panic lines logged", n))
	}
	if len(wrong) > 0 {
		r.Outcome = strings.Join(wrong, "; ")
	}
	r.OK = len(wrong) == 0
	return err
}

func orDash(s string) string {
	if s == "" {
		return "no extensions.code"
	}
	return s
}

// lenientParsing sends finding 12's ambiguous requests: each must be
// refused, not read one way or the other.
func lenientParsing(ctx context.Context, e *env, r *Result) error {
	cases := []struct {
		name, method, path, body string
		want                     []int
	}{
		{"limit=5&limit=500", http.MethodGet, "/api/v1/workloads/pods?limit=5&limit=500", "", []int{400}},
		{"sortOrder=asc&sortOrder=desc", http.MethodGet, "/api/v1/workloads/pods?sortOrder=asc&sortOrder=desc", "", []int{400}},
		{"limit=+5", http.MethodGet, "/api/v1/workloads/pods?limit=+5", "", []int{400}},
		{"trailing JSON", http.MethodPost, "/graphql", `{"query": "{ vms { total } }"} {"query": "{ nodes { id } }"}`, []int{400}},
		{"duplicate JSON keys", http.MethodPost, "/graphql", `{"query": "{ nodes { id } }", "query": "{ vms { total } }"}`, []int{400}},
		{"GET /v1/vms//id", http.MethodGet, "/v1/vms//" + e.fx.attackerVM, "", []int{400, 404}},
	}
	var wrong []string
	err := e.alone(ctx, r, len(cases), func(ctx context.Context, i int) {
		c := cases[i]
		var body []byte
		if c.body != "" {
			body = []byte(c.body)
		}
		status, _, err := e.do(ctx, i, c.method, c.path, ReaderKey, body)
		r.Statuses.Add(answer(status, err))
		ok := false
		for _, w := range c.want {
			ok = ok || (err == nil && status == w)
		}
		if !ok {
			wrong = append(wrong, fmt.Sprintf("%s: %s", c.name, answer(status, err)))
		}
	})
	if len(wrong) > 0 {
		r.Outcome = "not refused: " + strings.Join(wrong, ", ")
	}
	r.OK = len(wrong) == 0
	return err
}
