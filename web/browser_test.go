package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"gpugraph/demo"
	"gpugraph/internal/dataset"
	"gpugraph/internal/httpapi"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/services"
	"gpugraph/internal/services/live"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// chromium finds Debian's chromium (or $CHROMIUM). Without one the browser
// tests skip, loudly, unless GPUGRAPH_REQUIRE_CHROMIUM=1 (CI) makes that
// a failure.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "NO CHROMIUM: the playground's browser test did not run. Install Debian's chromium " +
		"(apt-get install chromium) or set CHROMIUM to a Chromium binary."
	if os.Getenv("GPUGRAPH_REQUIRE_CHROMIUM") == "1" {
		t.Fatal(msg + " GPUGRAPH_REQUIRE_CHROMIUM=1 makes this a failure.")
	}
	t.Log("\n\n*** " + msg + " ***\n")
	t.Skip(msg)
	return ""
}

// demoServer serves the demo data set on SQLite as the command does,
// subscriptions included. The playground does not depend on the engine,
// so one is enough here.
func demoServer(t *testing.T) *httptest.Server {
	t.Helper()
	return demoEnv(t).Server
}

// demo is a demo server with its handles, for a test that acts on what it
// serves behind the API's back: its store, and the services it was wired
// with (Config.Services).
type demoHandles struct {
	Server *httptest.Server
	Store  *store.Store
	Config httpapi.Config
}

// demoEnv is demoServer with its handles.
func demoEnv(t *testing.T) demoHandles {
	t.Helper()
	return demoEnvWith(t, httpapi.Config{})
}

// demoEnvWith is demoEnv on a server configured as cfg (rate limits,
// concurrency); the store and services are wired in as demoEnv's.
func demoEnvWith(t *testing.T, cfg httpapi.Config) demoHandles {
	t.Helper()
	b, err := demo.JSON(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return fixtureEnv(t, cfg, b)
}

// fixtureEnv serves the data set file b as demoEnvWith serves the demo's.
func fixtureEnv(t *testing.T, cfg httpapi.Config, b []byte) demoHandles {
	t.Helper()
	st := storetest.Open(t, store.SQLite)
	if _, err := dataset.LoadFile(context.Background(), st, b); err != nil {
		t.Fatal(err)
	}
	feed := live.New(st, live.Limits{})
	cfg = servertest.Wire(st, servertest.Options{Services: services.Config{Live: feed}, LoaderWait: time.Millisecond}, cfg)
	srv := httptest.NewServer(httpapi.New(cfg))
	t.Cleanup(func() { feed.Shutdown(); srv.Close() })
	return demoHandles{Server: srv, Store: st, Config: cfg}
}

// One Chromium serves every browser test of the package, each test in a
// tab of its own against a server of its own (another port, so another
// origin: no localStorage is shared). TestMain closes it.
var shared struct {
	once   sync.Once
	ctx    context.Context
	cancel context.CancelFunc
	dir    string // its profile
	err    error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.cancel != nil {
		shared.cancel()
		_ = os.RemoveAll(shared.dir)
	}
	os.Exit(code)
}

func sharedBrowser(t *testing.T, exe string) context.Context {
	t.Helper()
	shared.once.Do(func() {
		if shared.dir, shared.err = os.MkdirTemp("", "gpugraph-chromium-"); shared.err != nil {
			return
		}
		opts := append(chromedp.DefaultExecAllocatorOptions[:],
			chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU,
			chromedp.Flag("disable-dev-shm-usage", true),
			chromedp.Flag("no-proxy-server", true),
			chromedp.UserDataDir(shared.dir))
		actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		ctx, cancelCtx := chromedp.NewContext(actx)
		shared.ctx = ctx
		shared.cancel = func() { cancelCtx(); cancelAlloc() }
		shared.err = chromedp.Do(ctx) // starts it
	})
	if shared.err != nil {
		t.Fatalf("start chromium: %v", shared.err)
	}
	return shared.ctx
}

// viewport is a common laptop's: the default query must fit its editor.
const viewportWidth, viewportHeight = 1280, 800

// sent is one request the page made: its URL, and for a POST to /graphql
// the operation name and document it carried.
type sent struct {
	URL           string
	Query         string
	OperationName string
}

// browser opens a tab of the shared chromium at the common viewport; every
// request and WebSocket it makes is recorded in the returned list. The page
// reports when GraphiQL's query editor first appears as window.__ggEditorAt
// (ms since navigation start).
func browser(t *testing.T, exe string) (context.Context, func() []sent) {
	t.Helper()
	tab, cancelTab := chromedp.NewContext(sharedBrowser(t, exe))
	ctx, cancelTimeout := context.WithTimeout(tab, 2*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancelTab() })

	var mu sync.Mutex
	var reqs []sent
	err := chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			s := sent{URL: e.Request.URL}
			var body []byte
			for _, p := range e.Request.PostDataEntries {
				body = append(body, p.Bytes...)
			}
			var params struct{ Query, OperationName string }
			if json.Unmarshal(body, &params) == nil {
				s.Query, s.OperationName = params.Query, params.OperationName
			}
			reqs = append(reqs, s)
		case *network.EventWebSocketCreated:
			reqs = append(reqs, sent{URL: e.URL})
		}
	})
	if err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	const watch = `new MutationObserver((_, o) => {
	  if (document.querySelector('.graphiql-query-editor .CodeMirror')) {
	    window.__ggEditorAt = performance.now(); o.disconnect();
	  }
	}).observe(document, {childList: true, subtree: true});`
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument,
		page.AddScriptToEvaluateOnNewDocumentParams{Source: watch}); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(viewportWidth, viewportHeight)); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	return ctx, func() []sent { mu.Lock(); defer mu.Unlock(); return append([]sent(nil), reqs...) }
}

// editorJS is the CodeMirror object of one of GraphiQL's panes: the
// query editor, the response, or the open one of the editor tools.
func editorJS(pane string) string {
	sel := map[string]string{
		"query-editor": ".graphiql-query-editor .CodeMirror",
		"response":     ".graphiql-response .CodeMirror",
		"editor-tool":  ".graphiql-editor-tool .graphiql-editor:not(.hidden) .CodeMirror",
	}[pane]
	return `document.querySelector('` + sel + `').CodeMirror`
}

// within bounds one wait, so a regression fails in seconds with the step
// named rather than at the test's overall deadline.
func within(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(c, steps...); err != nil {
		status, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('gg-status')?.textContent ?? ''`))
		t.Fatalf("%s: %v (the page's status line: %q)", what, err, status)
	}
}

// waitResult waits until the result pane holds text containing want, and
// answers that text.
func waitResult(t *testing.T, ctx context.Context, want string) string {
	t.Helper()
	var got string
	var err error
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		got, err = chromedp.Run(ctx, chromedp.Evaluate[string](editorJS("response")+`.getValue()`))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(got, want) {
			return got
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("result pane never showed %q; it shows:\n%s", want, got)
	return ""
}

// run puts query in the editor and presses ▶ in the same task, as a user
// who clicks right after an edit does: GraphiQL has not yet read the edited
// operations (it does after a 100 ms debounce), and the page must send
// the edited operation all the same.
func run(t *testing.T, ctx context.Context, query string) {
	t.Helper()
	q, _ := json.Marshal(query)
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](editorJS("response")+`.setValue('');`+
		editorJS("query-editor")+`.setValue(`+string(q)+`);`+
		`document.querySelector('.graphiql-execute-button').click()`)); err != nil {
		t.Fatal(err)
	}
}

func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// graphql asks srv directly, for the answer the playground must show.
func graphql(t *testing.T, srv *httptest.Server, token, query string) map[string]any {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query})
	_, out := call(t, srv, http.MethodPost, "/graphql", token, body)
	return out
}

// call sends method path (with body as JSON, when not nil) and token's key
// to srv, and answers the status and the decoded answer.
func call(t *testing.T, srv *httptest.Server, method, path, token string, body []byte) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, srv.URL+path, bytes.NewReader(body))
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp.StatusCode, out
}

// nestedQuery is the default query's operation.
const nestedQuery = `query VmsNodesGpus {
  vms(limit: 5) {
    total
    vms {
      name
      status
      node {
        name
        gpus {
          index address health
          model { name }
        }
      }
    }
  }
}
`

// The playground as a newcomer meets it, in a real browser at a common
// laptop's viewport: the page opens with the key field focused, the
// default query's instructions fit the editor, the cold open says what to
// do, a key typed at once loads the schema and clears the 401, Ctrl-Enter
// runs the default query as is (open, type, run: three actions), an edit
// run at once sends the edited operation, a refused restart shows its
// error, a subscription receives an event, nothing leaves 127.0.0.1 and
// no key reaches localStorage.
func TestPlaygroundInBrowser(t *testing.T) {
	exe := chromium(t)
	srv := demoServer(t)
	ctx, requests := browser(t, exe)

	// Open: the first action.
	if err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS(`.graphiql-query-editor .CodeMirror`)),
		chromedp.WaitVisible(chromedp.CSS(`#gg-key`)),
	); err != nil {
		t.Fatal(err)
	}
	tti, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`window.__ggEditorAt`))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("time to interactive (navigation start → query editor present): %.0f ms", tti)

	// The key field has the focus, so the key can be typed at once.
	if got := focused(t, ctx); got != "gg-key" {
		t.Errorf("focus on load: %q, want the key field (gg-key)", got)
	}

	// Cold open: no key yet, and the page says what to do about the 401,
	// in the status line and in the result pane.
	within(t, ctx, "the cold open's 401 sentence", chromedp.WaitVisible(`//span[@id="gg-status"][contains(., "401")]`))
	if s := text(t, ctx, "#gg-status"); !strings.Contains(s, `type a key in the “API key” field above`) {
		t.Errorf("cold open status: %q", s)
	}
	if got := waitResult(t, ctx, `"UNAUTHENTICATED"`); !strings.Contains(got, `type a key in the “API key” field above`) {
		t.Errorf("cold open result pane:\n%s", got)
	}
	defaultQuery, err := chromedp.Run(ctx, chromedp.Evaluate[string](editorJS("query-editor")+`.getValue()`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(defaultQuery, "README") || !strings.Contains(defaultQuery, "acme-reader") {
		t.Errorf("the default query does not say where keys come from:\n%s", defaultQuery)
	}
	if !strings.HasSuffix(defaultQuery, nestedQuery) {
		t.Errorf("the default query's operation is not nestedQuery:\n%s", defaultQuery)
	}
	// Nothing of it is cut at the editor's right edge.
	if cut := cutLines(t, ctx); len(cut) > 0 {
		t.Errorf("at %d×%d the query editor cuts these lines of the default query:\n%s",
			viewportWidth, viewportHeight, strings.Join(cut, "\n"))
	}

	// Type a key, the second action, into whatever has the focus: the
	// schema is fetched again with it, and the 401 goes from the result
	// pane and the status line.
	within(t, ctx, "schema loaded after typing a key",
		chromedp.KeyEvent("acme-operator"),
		chromedp.WaitVisible(`//span[@id="gg-status"][contains(., "Schema loaded")]`))
	within(t, ctx, "the result pane cleared of the 401",
		chromedp.Poll[chromedp.Void](editorJS("response")+`.getValue() === ''`, chromedp.WithPollingTimeout(10*time.Second)))
	if s := text(t, ctx, "#gg-status"); strings.Contains(s, "401") {
		t.Errorf("status after a good key: %q", s)
	}

	// Ctrl-Enter, the third action, with the focus still in the key field:
	// the default query runs as is, and the VM → node → GPUs answer shows
	// exactly as the API gives it.
	if got := focused(t, ctx); got != "gg-key" {
		t.Fatalf("focus after typing the key: %q", got)
	}
	if err := chromedp.Do(ctx, chromedp.KeyEvent("\r", chromedp.KeyModifiers(chromedp.ModifierCtrl))); err != nil {
		t.Fatal(err)
	}
	var shown map[string]any
	if err := json.Unmarshal([]byte(waitResult(t, ctx, `"gpus"`)), &shown); err != nil {
		t.Fatal(err)
	}
	if want := graphql(t, srv, "acme-operator", nestedQuery); !reflect.DeepEqual(shown, want) {
		t.Errorf("result pane:\n%v\nAPI answers:\n%v", shown, want)
	}
	within(t, ctx, "the schema in the documentation explorer",
		chromedp.Click(chromedp.CSS(`button[aria-label="Show Documentation Explorer"]`)),
		chromedp.WaitVisible(`//div[contains(@class, "graphiql-doc-explorer")]//a[text()="Query"]`))

	// An operation renamed and run at once: the name sent is the edited
	// document's, and it answers.
	const renamed = `query OneVm { vms(limit: 1) { total } }`
	run(t, ctx, renamed)
	if got := waitResult(t, ctx, `"total"`); strings.Contains(got, `"errors"`) {
		t.Errorf("renamed operation shows:\n%s", got)
	}
	if last := lastGraphQLPost(t, requests()); last.Query != renamed || last.OperationName != "OneVm" {
		t.Errorf("sent operationName %q with %q, want OneVm with %q", last.OperationName, last.Query, renamed)
	}

	// A restart the table refuses shows its error (an anonymous operation
	// run at once after a named one).
	run(t, ctx, `mutation { restartVm(id: "vm-terminated") { id status } }`)
	if got := waitResult(t, ctx, `"VM_TERMINATED"`); !strings.Contains(got, `"status": 409`) {
		t.Errorf("refused restart shows:\n%s", got)
	}

	// A subscription over graphql-ws receives the event of a restart made
	// over HTTP. The restart repeats until the event shows, since the
	// subscription's start is not observable from here.
	run(t, ctx, `subscription { vmEvents(ids: ["vm-restart-ok-running"]) { vmId from to transition vm { status } } }`)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(300 * time.Millisecond):
			}
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/vms/vm-restart-ok-running/restart", nil)
			req.Header.Set("Authorization", "Bearer acme-operator")
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}
	}()
	got := waitResult(t, ctx, `"restart-reboot"`)
	close(done)
	if !strings.Contains(got, `"vmId": "vm-restart-ok-running"`) {
		t.Errorf("subscription shows:\n%s", got)
	}

	// Nothing left 127.0.0.1: the page, its assets, its API calls and its
	// WebSocket all went to the test server.
	base, _ := url.Parse(srv.URL)
	var sawWS bool
	for _, r := range requests() {
		p, err := url.Parse(r.URL)
		if err != nil || (p.Scheme != "data" && p.Host != base.Host) {
			t.Errorf("request to %s, outside %s", r.URL, base.Host)
		}
		sawWS = sawWS || p.Scheme == "ws"
	}
	if !sawWS {
		t.Errorf("no WebSocket was opened: %v", requests())
	}

	// History is kept, and holds no key.
	noKeyStored(t, ctx, "acme-operator", "restartVm")
}

// focused is the id of the element that has the focus.
func focused(t *testing.T, ctx context.Context) string {
	t.Helper()
	id, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.activeElement ? document.activeElement.id : ''`))
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// cutLines are the query editor's lines whose end lies past the editor's
// visible right edge (its vertical scrollbar aside).
func cutLines(t *testing.T, ctx context.Context) []string {
	t.Helper()
	cut, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`(() => {
	  const cm = `+editorJS("query-editor")+`;
	  const vbar = cm.display.scrollbars.vert;
	  const right = cm.getWrapperElement().getBoundingClientRect().right - (vbar.offsetParent ? vbar.offsetWidth : 0);
	  const cut = [];
	  for (let i = 0; i < cm.lineCount(); i++) {
	    if (cm.charCoords({line: i, ch: cm.getLine(i).length}, 'window').left > right) cut.push(cm.getLine(i));
	  }
	  return cut;
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	return cut
}

// lastGraphQLPost is the last POST to /graphql the page sent.
func lastGraphQLPost(t *testing.T, reqs []sent) sent {
	t.Helper()
	for i := len(reqs) - 1; i >= 0; i-- {
		if u, err := url.Parse(reqs[i].URL); err == nil && u.Path == "/graphql" && reqs[i].Query != "" {
			return reqs[i]
		}
	}
	t.Fatal("the page sent no GraphQL request")
	return sent{}
}

// The headers editor is the other way in: an Authorization typed there
// fetches the schema again too.
func TestPlaygroundHeadersEditor(t *testing.T) {
	exe := chromium(t)
	srv := demoServer(t)
	ctx, _ := browser(t, exe)
	within(t, ctx, "schema loaded after a header typed in the headers editor",
		chromedp.Navigate(srv.URL+"/"),
		chromedp.WaitVisible(`//span[@id="gg-status"][contains(., "401")]`),
		chromedp.Click(`//button[normalize-space(.)="Headers"]`),
		chromedp.Evaluate[chromedp.Void](editorJS("editor-tool")+`.setValue('{"Authorization": "Bearer acme-reader"}')`),
		chromedp.WaitVisible(`//span[@id="gg-status"][contains(., "Schema loaded")]`),
		chromedp.Poll[chromedp.Void](editorJS("response")+`.getValue() === ''`, chromedp.WithPollingTimeout(10*time.Second)))
	run(t, ctx, `{ vms(limit: 1) { total } }`)
	want := graphql(t, srv, "acme-reader", `{ vms(limit: 1) { total } }`)
	got := waitResult(t, ctx, `"total"`)
	if !strings.Contains(got, fmt.Sprint(want["data"].(map[string]any)["vms"].(map[string]any)["total"])) {
		t.Errorf("result pane %s, API %v", got, want)
	}
	// The header typed in the editor went with the query into history,
	// which reaches localStorage without it.
	noKeyStored(t, ctx, "acme-reader", "vms(limit: 1)")
}

// noKeyStored checks localStorage: GraphiQL's history holds the query
// want, and no entry holds the key or any headers.
func noKeyStored(t *testing.T, ctx context.Context, key, want string) {
	t.Helper()
	stored, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]string](`Object.fromEntries(Object.entries(localStorage))`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stored["graphiql:queries"], want) {
		t.Errorf("history was not kept: %v", stored)
	}
	for k, v := range stored {
		if strings.Contains(v, "Bearer "+key) || strings.Contains(v, `"headers"`) {
			t.Errorf("localStorage %s holds a key: %s", k, v)
		}
	}
}
