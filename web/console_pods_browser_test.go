package web_test

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"
)

// The Pods page's tests: the Run:ai list as the Pods API filters, counts
// and sorts it, and a pod's plots as podMetrics answers them.

// fill replaces the text of the input sel with text as typed keys, so the
// page sees its input events; "\r" at the end submits its form.
func (c *consoleTab) fill(sel, text string) {
	c.t.Helper()
	c.within("typing into "+sel,
		chromedp.WaitVisible(chromedp.CSS(sel)),
		chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.value = ''; e.dispatchEvent(new Event('input', {bubbles: true})); })()`, sel)),
		chromedp.SendKeys(chromedp.CSS(sel), text))
}

// openAs opens the console's path, types key and waits for the page
// titled title.
func openAs(t *testing.T, srv *httptest.Server, path, key, title string) *consoleTab {
	t.Helper()
	c := openConsole(t, srv, path)
	c.typeKey(key)
	c.waitPage(title)
	return c
}

// apiError is the first error's message and code the API answers query
// with as key.
func apiError(t *testing.T, srv *httptest.Server, key, query string) (msg, code string) {
	t.Helper()
	errs, ok := graphql(t, srv, key, query)["errors"].([]any)
	if !ok || len(errs) == 0 {
		t.Fatalf("%s as %s: no error", query, key)
	}
	e := errs[0].(map[string]any)
	return e["message"].(string), e["extensions"].(map[string]any)["code"].(string)
}

// waitAPIError waits until an alert under the element sel shows an error
// with exactly msg and code (ApiError's lines).
func (c *consoleTab) waitAPIError(what, sel, msg, code string) {
	c.t.Helper()
	c.within(what, chromedp.Poll[chromedp.Void](fmt.Sprintf(`[...document.querySelectorAll(%s)].some((e) =>
	  e.querySelector('.gg-error-message').textContent === %s && e.querySelector('.gg-error-code')?.textContent === %s)`,
		mustJSON(c.t, sel+` [role="alert"] li`), mustJSON(c.t, msg), mustJSON(c.t, code))))
}

// plotPoints waits for the uPlot chart marked data-plot=name and answers
// how many points its series hold (their values that are not null).
func (c *consoleTab) plotPoints(name string) int {
	c.t.Helper()
	sel := mustJSON(c.t, fmt.Sprintf(`[data-plot=%q]`, name))
	c.within(name+"'s chart", chromedp.Poll[chromedp.Void](`document.querySelector(`+sel+`)?.uplot !== undefined`))
	n, err := chromedp.Run(c.ctx, chromedp.Evaluate[int](`document.querySelector(`+sel+`).uplot.data.slice(1).flat().filter((v) => v != null).length`))
	if err != nil {
		c.t.Fatal(err)
	}
	return n
}

// dataset is the data-* attributes of the first element sel matches.
func (c *consoleTab) dataset(sel string) map[string]string {
	c.t.Helper()
	d, err := chromedp.Run(c.ctx, chromedp.Evaluate[map[string]string](`({...document.querySelector(`+mustJSON(c.t, sel)+`).dataset})`))
	if err != nil {
		c.t.Fatal(err)
	}
	return d
}

// podsTotal asks podsCount, with args (GraphQL arguments, or ""), as key.
func podsTotal(t *testing.T, srv *httptest.Server, key, args string) int {
	t.Helper()
	q := `{ podsCount }`
	if args != "" {
		q = `{ podsCount(` + args + `) }`
	}
	ans := graphql(t, srv, key, q)
	n, ok := ans["data"].(map[string]any)["podsCount"].(float64)
	if !ok {
		t.Fatalf("podsCount(%s): %v", args, ans)
	}
	return int(n)
}

// podNames are the names pods answers, with args, as key.
func podNames(t *testing.T, srv *httptest.Server, key, args string) []string {
	t.Helper()
	ans := graphql(t, srv, key, `{ pods(`+args+`) { pods { name } } }`)
	var names []string
	for _, p := range ans["data"].(map[string]any)["pods"].(map[string]any)["pods"].([]any) {
		names = append(names, p.(map[string]any)["name"].(string))
	}
	return names
}

// shownPrefix holds when the list's rows (those rendered: it renders the
// rows in view) are the first of the JSON array %s, in its order.
const shownPrefix = `(() => {
  const shown = [...document.querySelectorAll('.gg-pods-table button[data-pod]')].map((b) => b.textContent);
  const want = %s;
  return shown.length > 0 && JSON.stringify(shown) === JSON.stringify(want.slice(0, shown.length));
})()`

// waitTotal waits until the page's count says n pods match.
func (c *consoleTab) waitTotal(what string, n int) {
	c.t.Helper()
	c.within(what, chromedp.WaitVisible(fmt.Sprintf(`//p[@class="gg-count"][@data-total="%d"]`, n)))
}

// shownPods are the pod names the list's rows show, top down.
func (c *consoleTab) shownPods() []string {
	c.t.Helper()
	names, err := chromedp.Run(c.ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('.gg-pods-table button[data-pod]')].map((b) => b.textContent)`))
	if err != nil {
		c.t.Fatal(err)
	}
	return names
}

// The list filters, searches and sorts as the Pods API does: a filterBy
// and a search from demo/README.md narrow it to podsCount's numbers, the
// name column sorts both ways as pods(sortBy: NAME) answers, and a bad
// filterBy shows the API's own message and code.
func TestConsolePodsFilters(t *testing.T) {
	srv := demoServer(t)
	const key = "acme-reader"
	c := openAs(t, srv, "/pods", key, "Pods")
	all := podsTotal(t, srv, key, "")
	c.waitTotal("every live pod", all)

	// A page of 500 renders only the rows in view; scrolled to its end it
	// shows the API's last pod of the page.
	c.within("500 rows a page", chromedp.Evaluate[chromedp.Void](`(() => {
	  const s = document.querySelector('select[name="limit"]'); s.value = '500'; s.dispatchEvent(new Event('change', {bubbles: true}));
	})()`))
	page := podNames(t, srv, key, `sortBy: CREATED_AT, sortOrder: DESC, limit: 500`)
	if len(page) != min(all, 500) || len(page) < 50 {
		t.Fatalf("pods(limit: 500) answers %d of %d pods", len(page), all)
	}
	c.within("the page of 500", chromedp.WaitVisible(fmt.Sprintf(`//p[@class="gg-count"][starts-with(., "Pods 1–%d of")]`, len(page))))
	if n := len(c.shownPods()); n == 0 || n > 30 {
		t.Errorf("%d of %d rows rendered; want only those in view", n, len(page))
	}
	c.within("the end of the list", chromedp.Evaluate[chromedp.Void](`(() => { const s = document.querySelector('.gg-pods-scroll'); s.scrollTop = s.scrollHeight; })()`),
		chromedp.Poll[chromedp.Void](fmt.Sprintf(`(() => { const b = [...document.querySelectorAll('.gg-pods-table button[data-pod]')]; return b.length > 0 && b[b.length - 1].textContent === %s; })()`,
			mustJSON(t, page[len(page)-1]))))

	// A filterBy: names beginning with sweep_lr (the _ matches itself).
	filter := "name=^sweep_lr"
	want := podsTotal(t, srv, key, fmt.Sprintf(`filterBy: [%q]`, filter))
	if want == 0 || want == podsTotal(t, srv, key, "") {
		t.Fatalf("the demo's %s matches %d pods: no test of a filter", filter, want)
	}
	c.fill(`input[name="filterBy"]`, filter+"\r")
	c.waitTotal("the list filtered by "+filter, want)

	// Sorting by name, ascending then descending, as the API orders them.
	c.within("sort by name", chromedp.Click(`//th//button[starts-with(normalize-space(.), "Name")]`),
		chromedp.WaitVisible(`//th[@aria-sort="ascending"]//button[starts-with(normalize-space(.), "Name")]`))
	asc := podNames(t, srv, key, fmt.Sprintf(`filterBy: [%q], sortBy: NAME, sortOrder: ASC`, filter))
	c.within("the ascending order", chromedp.Poll[chromedp.Void](fmt.Sprintf(
		shownPrefix, mustJSON(t, asc))))
	c.within("sort by name descending", chromedp.Click(`//th//button[starts-with(normalize-space(.), "Name")]`),
		chromedp.WaitVisible(`//th[@aria-sort="descending"]//button[starts-with(normalize-space(.), "Name")]`))
	desc := podNames(t, srv, key, fmt.Sprintf(`filterBy: [%q], sortBy: NAME, sortOrder: DESC`, filter))
	c.within("the descending order", chromedp.Poll[chromedp.Void](fmt.Sprintf(
		shownPrefix, mustJSON(t, desc))))
	if rev := slices.Clone(asc); len(rev) > 0 {
		slices.Reverse(rev)
		if !slices.Equal(rev, desc) {
			t.Errorf("descending %v is not ascending %v reversed", desc, asc)
		}
	}

	// A search (case-insensitive, non-ASCII) in place of the filter.
	c.fill(`input[name="filterBy"]`, "")
	c.fill(`input[name="search"]`, "ZOË\r")
	want = podsTotal(t, srv, key, `search: "ZOË"`)
	if want == 0 {
		t.Fatal("the demo's search for zoë finds nothing")
	}
	c.waitTotal("the list searched for ZOË", want)
	for _, n := range c.shownPods() {
		if n == "" {
			t.Errorf("a row without a name")
		}
	}

	// A bad filterBy: the API's words, not the page's.
	bad := "name~~zoë"
	msg, code := apiError(t, srv, key, fmt.Sprintf(`{ pods(filterBy: [%q]) { total } }`, bad))
	c.fill(`input[name="filterBy"]`, bad+"\r")
	c.waitAPIError("the API's refusal of "+bad, "main", msg, code)
	t.Logf("filterBy %q: %s %s", bad, msg, code)

	c.axe()
	c.onlyOwnHost()
	c.keyInSessionOnly(key)
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A pod's plots hold what podMetrics answers: for a training pod of the
// demo (llama3-70b-pretrain-master-0) over the last hour, the GPU
// utilization and memory charts' uPlot series hold as many points as the
// API's series for that pod and window; for a serving pod the NIM
// time-to-first-token percentiles do too; the table toggle shows them.
func TestConsolePodsMetrics(t *testing.T) {
	srv := demoServer(t)
	const key = "acme-reader"
	c := openAs(t, srv, "/pods", key, "Pods")

	for _, pod := range []struct {
		name, id, workload string
		plots              map[string]string // data-plot: metric type
	}{
		{"llama3-70b-pretrain-master-0", "1fc3994a-2eb2-559c-a87e-c91b75f73ea0", "abac6a90-5b54-5000-9b14-72baefd89601",
			map[string]string{"gpu-utilization": "GPU_UTILIZATION_PER_GPU", "gpu-memory": "GPU_MEMORY_USAGE_BYTES_PER_GPU"}},
		{"llama-3-70b-chat-00002-deployment-8fs5sprnb4-vkqrr", "539f135a-bf88-5a31-b0d0-ff918ec8a6ea", "47bd91de-25f3-5e00-b231-d0c1d74cfcd3",
			map[string]string{"nim-ttft": "NIM_TIME_TO_FIRST_TOKEN_SECONDS_PERCENTILES", "gpu-utilization": "GPU_UTILIZATION_PER_GPU"}},
	} {
		c.fill(`input[name="filterBy"]`, "name=="+pod.name+"\r")
		c.waitTotal("the list filtered to "+pod.name, podsTotal(t, srv, key, fmt.Sprintf(`filterBy: ["name==%s"]`, pod.name)))
		c.within("select "+pod.name, chromedp.Click(chromedp.CSS(fmt.Sprintf(`button[data-pod="%s"]`, pod.id))),
			chromedp.WaitVisible(fmt.Sprintf(`//h2[@id="gg-pod-title"][.=%q]`, pod.name)))
		for plot, typ := range pod.plots {
			got := c.plotPoints(plot)
			win := c.dataset(".gg-metrics")
			want := metricPoints(t, srv, key, pod.workload, pod.id, typ, win["start"], win["end"], win["samples"])
			if want == 0 || got != want {
				t.Errorf("%s of %s, %s to %s: the chart holds %d points, podMetrics answers %d", plot, pod.name, win["start"], win["end"], got, want)
			}
		}
	}

	// The text alternative: the last chart's points as a table.
	c.within("the table toggle", chromedp.Click(`//figure[.//*[@data-plot="nim-ttft"]]//button[.="Show as a table"]`),
		chromedp.WaitVisible(chromedp.CSS(`#plot-nim-ttft-table table`)))
	cells, err := chromedp.Run(c.ctx, chromedp.Evaluate[int](`[...document.querySelectorAll('#plot-nim-ttft-table tbody td')].filter((td) => td.textContent !== '–').length`))
	if err != nil {
		t.Fatal(err)
	}
	if chart := c.plotPoints("nim-ttft"); cells != chart {
		t.Errorf("the table shows %d values, the chart %d", cells, chart)
	}

	c.axe()
	c.onlyOwnHost()
	c.keyInSessionOnly(key)
	c.screenshot("pods")
}

// metricPoints counts the points podMetrics answers for one type of a
// pod over [start, end]: a series' samples, or a _PERCENTILES type's
// p50, p90 and p99 that are numbers.
func metricPoints(t *testing.T, srv *httptest.Server, key, workload, pod, typ, start, end, samples string) int {
	t.Helper()
	ans := graphql(t, srv, key, fmt.Sprintf(`{ podMetrics(workloadId: %q, podId: %q, metricTypes: [%s], start: %q, end: %q, numberOfSamples: %s) {
	  measurements { values { value } } histogram { values { data } } } }`, workload, pod, typ, start, end, samples))
	m, ok := ans["data"].(map[string]any)["podMetrics"].(map[string]any)
	if !ok {
		t.Fatalf("podMetrics: %v", ans)
	}
	n := 0
	for _, s := range m["measurements"].([]any) {
		for _, v := range s.(map[string]any)["values"].([]any) {
			if isNumber(v.(map[string]any)["value"]) {
				n++
			}
		}
	}
	if h, ok := m["histogram"].([]any); ok {
		for _, s := range h {
			for _, v := range s.(map[string]any)["values"].([]any) {
				d := v.(map[string]any)["data"].(map[string]any)
				for _, q := range []string{"p50", "p90", "p99"} {
					if isNumber(d[q]) {
						n++
					}
				}
			}
		}
	}
	return n
}

// isNumber: a decimal string that reads as a finite number.
func isNumber(v any) bool {
	s, ok := v.(string)
	if !ok {
		return false
	}
	f, err := strconv.ParseFloat(s, 64)
	return err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
}
