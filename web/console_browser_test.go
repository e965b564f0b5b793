package web_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"gpugraph/internal/httpapi"
	"gpugraph/internal/lib/ratelimit"
)

// The console's browser harness: each page's test opens the console on a
// demo server in a tab of the shared chromium (openConsole), types a key
// (c.typeKey), goes to its page (c.goTo) and acts on it, then runs the
// checks every page passes: c.axe, c.onlyOwnHost, c.keyInSessionOnly, and
// c.screenshot for docs/console/<page>.png.

// consoleTab is one tab on the console of srv.
type consoleTab struct {
	t        *testing.T
	ctx      context.Context
	srv      *httptest.Server
	requests func() []sent
}

// consoleReady marks when the app first rendered its key form or its
// shell, as window.__ggConsoleAt (ms since navigation start): the moment
// it answers input.
const consoleReady = `new MutationObserver((_, o) => {
  if (document.querySelector('#gg-key, .gg-shell')) {
    window.__ggConsoleAt = performance.now(); o.disconnect();
  }
}).observe(document, {childList: true, subtree: true});`

// openConsole opens srv's /console<path> in a new tab and waits until the
// app is interactive.
func openConsole(t *testing.T, srv *httptest.Server, path string) *consoleTab {
	t.Helper()
	exe := chromium(t)
	ctx, requests := browser(t, exe)
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument,
		page.AddScriptToEvaluateOnNewDocumentParams{Source: consoleReady}); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	c := &consoleTab{t: t, ctx: ctx, srv: srv, requests: requests}
	c.within("the console's first render",
		chromedp.Navigate(srv.URL+"/console"+path),
		chromedp.WaitVisible(chromedp.CSS(`#gg-key, .gg-shell`)))
	return c
}

// readyAt is when the app first rendered, in ms since navigation start.
func (c *consoleTab) readyAt() float64 {
	c.t.Helper()
	ms, err := chromedp.Run(c.ctx, chromedp.Evaluate[float64](`window.__ggConsoleAt`))
	if err != nil {
		c.t.Fatal(err)
	}
	return ms
}

// within runs steps, failing the test with what it waited for after 30 s.
func (c *consoleTab) within(what string, steps ...chromedp.Action[chromedp.Void]) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		body, _ := chromedp.Run(c.ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ''`))
		c.t.Fatalf("%s: %v\nthe page shows:\n%s", what, err, body)
	}
}

// typeKey types key into the key form and submits it with Enter, as a
// person does, and waits for the shell.
func (c *consoleTab) typeKey(key string) {
	c.t.Helper()
	c.submitKey(key)
	c.within("the shell after typing the key", chromedp.WaitVisible(chromedp.CSS(`.gg-shell nav`)))
}

// submitKey types key into the key form and submits it with Enter.
func (c *consoleTab) submitKey(key string) {
	c.t.Helper()
	c.within("typing the key",
		chromedp.Focus(chromedp.CSS(`#gg-key`)),
		chromedp.KeyEvent(key+"\r"))
}

// goTo follows the nav's link to the page titled title, and waits for its
// heading and the link marked current.
func (c *consoleTab) goTo(title string) {
	c.t.Helper()
	c.within("the nav's link to "+title,
		chromedp.Click(fmt.Sprintf(`//nav//a[normalize-space(.)=%q]`, title)))
	c.waitPage(title)
}

// waitPage waits until the page titled title is shown, its nav link
// marked aria-current="page".
func (c *consoleTab) waitPage(title string) {
	c.t.Helper()
	c.within("the "+title+" page",
		chromedp.WaitVisible(fmt.Sprintf(`//main//h1[@id="page-title"][normalize-space(.)=%q]`, title)),
		chromedp.WaitVisible(fmt.Sprintf(`//nav//a[@aria-current="page"][normalize-space(.)=%q]`, title)))
}

// axeViolation is one of axe-core's findings as the test reports it.
type axeViolation struct {
	ID, Impact, Help string
	Nodes            []string
}

// axe runs axe-core (the console's pinned axe-core, injected through the
// DevTools protocol: the page's own policy loads nothing else) on the page
// as it stands, and fails on any serious or critical violation.
func (c *consoleTab) axe() {
	c.t.Helper()
	_, modules := consoleModules.Find(c.t)
	src, err := os.ReadFile(filepath.Join(modules, "axe-core", "axe.min.js"))
	if err != nil {
		c.t.Fatal(err)
	}
	if _, err := chromedp.Run(c.ctx, chromedp.Evaluate[chromedp.Void](string(src))); err != nil {
		c.t.Fatalf("inject axe-core: %v", err)
	}
	found, err := chromedp.Run(c.ctx, chromedp.Evaluate[[]axeViolation](`axe.run(document, {resultTypes: ['violations']}).then((r) =>
	  r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => ({
	    id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(' ') + ': ' + n.failureSummary),
	  })))`, chromedp.EvalAwaitPromise))
	if err != nil {
		c.t.Fatalf("axe.run: %v", err)
	}
	for _, v := range found {
		c.t.Errorf("axe-core, %s %s: %s\n  %s", v.Impact, v.ID, v.Help, strings.Join(v.Nodes, "\n  "))
	}
}

// onlyOwnHost checks that every request and WebSocket the page made went
// to the page's own host (data: URLs aside), and that it made some.
func (c *consoleTab) onlyOwnHost() {
	c.t.Helper()
	base, _ := url.Parse(c.srv.URL)
	reqs := c.requests()
	if len(reqs) == 0 {
		c.t.Error("the page made no request")
	}
	for _, r := range reqs {
		p, err := url.Parse(r.URL)
		if err != nil || (p.Scheme != "data" && p.Host != base.Host) {
			c.t.Errorf("request to %s, outside %s", r.URL, base.Host)
		}
	}
}

// keyInSessionOnly checks that localStorage holds nothing and that the
// key is in sessionStorage, and nowhere else there.
func (c *consoleTab) keyInSessionOnly(key string) {
	c.t.Helper()
	local, err := chromedp.Run(c.ctx, chromedp.Evaluate[map[string]string](`Object.fromEntries(Object.entries(localStorage))`))
	if err != nil {
		c.t.Fatal(err)
	}
	if len(local) != 0 {
		c.t.Errorf("localStorage holds %v, want nothing", local)
	}
	session, err := chromedp.Run(c.ctx, chromedp.Evaluate[map[string]string](`Object.fromEntries(Object.entries(sessionStorage))`))
	if err != nil {
		c.t.Fatal(err)
	}
	var holding []string
	for k, v := range session {
		if strings.Contains(v, key) {
			holding = append(holding, k)
		}
	}
	if len(holding) != 1 || session[holding[0]] != key {
		c.t.Errorf("sessionStorage %v: want the key in one entry", session)
	}
}

// screenshot writes the page as it stands to docs/console/<name>.png when
// GPUGRAPH_CONSOLE_SCREENSHOTS=1 (make console-screenshots), for the docs.
func (c *consoleTab) screenshot(name string) {
	c.t.Helper()
	if os.Getenv("GPUGRAPH_CONSOLE_SCREENSHOTS") != "1" {
		return
	}
	png, err := chromedp.Run(c.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		c.t.Fatal(err)
	}
	dir := filepath.Join("..", "docs", "console")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		c.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		c.t.Fatal(err)
	}
	c.t.Logf("wrote docs/console/%s.png", name)
}

// The shell on the VMs page as a newcomer meets it: the key form at
// /console, the key typed once, /console becoming the VMs page with the
// organization's VMs, the nav on it, and every check a page passes.
func TestConsoleBrowserVMs(t *testing.T) {
	srv := demoServer(t)
	c := openConsole(t, srv, "")
	t.Logf("first load of /console until the key form is interactive: %.0f ms", c.readyAt())
	if got := focused(t, c.ctx); got != "gg-key" {
		t.Errorf("focus on load: %q, want the key field (gg-key)", got)
	}
	c.axe() // the key form

	c.typeKey("acme-operator")
	c.waitPage("VMs")
	if n, _ := chromedp.Run(c.ctx, chromedp.Evaluate[int](`document.querySelectorAll('#console > :not(.gg-shell)').length`)); n != 0 {
		t.Errorf("%d elements beside the shell (the page's loading line left behind?)", n)
	}
	want := graphql(t, srv, "acme-operator", `{ vms(limit: 50) { total vms { name } } }`)["data"].(map[string]any)["vms"].(map[string]any)
	first := want["vms"].([]any)[0].(map[string]any)["name"].(string)
	c.within("the VMs list",
		chromedp.WaitVisible(fmt.Sprintf(`//table//td[normalize-space(.)=%q]`, first)),
		chromedp.WaitVisible(fmt.Sprintf(`//table/caption[starts-with(normalize-space(.), "%v VMs")]`, want["total"])))
	path, err := chromedp.Run(c.ctx, chromedp.Evaluate[string](`location.pathname`))
	if err != nil || path != "/console/vms" {
		t.Errorf("path %q (%v)", path, err)
	}

	// The header names the key's organization and what it holds (viewer).
	c.within("the header's organization", chromedp.WaitVisible(`//p[@class="gg-org"]/strong[normalize-space(.)="Acme Robotics"]`))
	if held, _ := chromedp.Run(c.ctx, chromedp.Evaluate[string](`document.querySelector('.gg-perms').textContent`)); !strings.HasSuffix(held, ": compute.read, compute.operate, workloads.read") {
		t.Errorf("the header says the key holds %q", held)
	}

	// The nav: real links, the current one marked; another page and Back.
	c.goTo("Fleet")
	if p, _ := chromedp.Run(c.ctx, chromedp.Evaluate[string](`location.pathname`)); p != "/console/fleet" {
		t.Errorf("Fleet's path %q", p)
	}
	c.within("Back", chromedp.NavigateBack())
	c.waitPage("VMs")

	c.axe()
	c.onlyOwnHost()
	c.keyInSessionOnly("acme-operator")
	// The VMs page's own test (console_vms_browser_test.go) takes its
	// screenshot, with the API's answer to a restart shown.
}

// A key the server refuses brings the key form back with the API's own
// refusal, word for word with its code; Forget key drops a good one from
// sessionStorage and shows the form.
func TestConsoleBrowserKeyRefused(t *testing.T) {
	srv := demoServer(t)
	c := openConsole(t, srv, "/pods")
	c.submitKey("no-such-key")
	want := graphql(t, srv, "no-such-key", `{ vms { total } }`)["errors"].([]any)[0].(map[string]any)
	msg, code := want["message"].(string), want["extensions"].(map[string]any)["code"].(string)
	c.within("the refusal under the key form",
		chromedp.WaitVisible(chromedp.CSS(`#gg-key`)),
		chromedp.WaitVisible(fmt.Sprintf(`//div[@role="alert"]//span[@class="gg-error-message"][.=%q]`, msg)),
		chromedp.WaitVisible(fmt.Sprintf(`//div[@role="alert"]//code[.=%q]`, code)))
	if stored, _ := chromedp.Run(c.ctx, chromedp.Evaluate[int](`sessionStorage.length`)); stored != 0 {
		t.Errorf("sessionStorage holds %d entries after a refused key", stored)
	}
	c.axe()

	c.typeKey("acme-reader")
	c.waitPage("Pods") // the page the path named
	c.keyInSessionOnly("acme-reader")
	c.within("Forget key", chromedp.Click(`//header//button[.="Forget key"]`), chromedp.WaitVisible(chromedp.CSS(`#gg-key`)))
	if stored, _ := chromedp.Run(c.ctx, chromedp.Evaluate[int](`sessionStorage.length + localStorage.length`)); stored != 0 {
		t.Errorf("storage holds %d entries after Forget key", stored)
	}
	c.onlyOwnHost()
}

// An error with a retryAfter shows the API's message and code as they
// are, and counts down from its retryAfter. A key allowed one request
// (and one more every 5 s) makes the shell's second query a 429.
func TestConsoleBrowserRetryAfter(t *testing.T) {
	env := demoEnvWith(t, httpapi.Config{RateLimits: map[ratelimit.Class]ratelimit.Limit{ratelimit.API: {Rate: 0.2, Burst: 1}}})
	c := openConsole(t, env.Server, "/vms")
	c.typeKey("acme-reader")
	c.within("the refusal's countdown", chromedp.WaitVisible(chromedp.CSS(`.gg-error .gg-retry`)))
	shown, err := chromedp.Run(c.ctx, chromedp.Evaluate[map[string]string](`(() => {
	  const e = document.querySelector('.gg-retry').closest('li');
	  return {message: e.querySelector('.gg-error-message').textContent, code: e.querySelector('.gg-error-code').textContent,
	    retryAfter: e.querySelector('.gg-retry').dataset.retryAfter, countdown: e.querySelector('.gg-retry').textContent};
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	answer := graphql(t, env.Server, "acme-reader", `{ vms { total } }`)["errors"].([]any)[0].(map[string]any)
	ext := answer["extensions"].(map[string]any)
	// The two refusals differ only in the seconds they name.
	secs := regexp.MustCompile(`\d+ s$`)
	if secs.ReplaceAllString(shown["message"], "N s") != secs.ReplaceAllString(answer["message"].(string), "N s") ||
		!strings.HasSuffix(shown["message"], " "+shown["retryAfter"]+" s") || shown["code"] != ext["code"] {
		t.Errorf("shown %q, the API answers %v", shown, answer)
	}
	// It counts down: another whole number of seconds, or "retry now".
	c.within("the countdown ticking", chromedp.Poll[chromedp.Void](fmt.Sprintf(`(() => {
	  const t = document.querySelector('.gg-retry').textContent;
	  return t !== 'retry in %s s' && /^retry (in [0-9]+ s|now)$/.test(t);
	})()`, shown["retryAfter"]), chromedp.WithPollingTimeout(10*time.Second)))
	c.axe()
}
