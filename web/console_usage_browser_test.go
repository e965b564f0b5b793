package web_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"gpugraph/internal/services/metering"
)

// The Usage page's tests: Initech's money as the API answers it after a
// few metering passes, its usage as charts, the API's CSV downloaded as
// it is; and a key without billing.read refused in the API's words.

// meter runs n metering passes over the demo's store, a default interval
// apart from now, as the server's runner would: Initech's (prepaid)
// workloads start their meters at the first and are debited at each
// later one, so its usage has lines and its balance has fallen.
func meter(t *testing.T, env demoHandles, n int) {
	t.Helper()
	start := time.Now()
	now := start
	m := metering.New(env.Store, func() time.Time { return now })
	for pass := 1; pass <= n; pass++ {
		now = start.Add(time.Duration(pass) * metering.DefaultInterval)
		if _, err := m.Pass(context.Background()); err != nil {
			t.Fatalf("metering pass %d: %v", pass, err)
		}
	}
}

// restGet answers GET path on srv as key with accept, and the body.
func restGet(t *testing.T, srv *httptest.Server, key, path, accept string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Accept", accept)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body
}

// cents writes a number of the API's answer as the page writes it (JS's
// String: the shortest decimal that reads back the same).
func cents(v any) string {
	f, ok := v.(float64)
	if !ok {
		return ""
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// Initech's balance, burn rate and runway as organization answers them;
// the charts hold a point for each usage line the API answers for the
// page's period (by day, by GPU model); the CSV download is the API's
// CSV, byte for byte.
func TestConsoleUsage(t *testing.T) {
	env := demoEnv(t)
	meter(t, env, 3)
	srv := env.Server
	const key = "initech-billing"
	c := openAs(t, srv, "/usage", key, "Usage")

	org := graphql(t, srv, key, `{ organization { balance burnRatePerHour runwayHours } }`)["data"].(map[string]any)["organization"].(map[string]any)
	figures := map[string]string{"balance": cents(org["balance"]), "burn": cents(org["burnRatePerHour"])}
	for fig, want := range figures {
		c.within(fig+" as the API answers it",
			chromedp.WaitVisible(fmt.Sprintf(`//dd[@data-figure=%q][@data-cents=%q][contains(., "(%s ¢")]`, fig, want, want)))
	}
	runway := cents(org["runwayHours"])
	if runway == "" {
		t.Fatalf("Initech has no runway after metering: %v", org)
	}
	c.within("the runway as the API answers it",
		chromedp.WaitVisible(fmt.Sprintf(`//dd[@data-figure="runway"][@data-hours=%q][contains(., "(%s h)")]`, runway, runway)))
	t.Logf("Initech after 3 passes: balance %s ¢, burn %s ¢/h, runway %s h", figures["balance"], figures["burn"], runway)

	// The charts: a point per line of the API's usage over the page's period.
	period := c.dataset("[data-from]")
	for plot, group := range map[string]string{"usage-by-day": "DAY", "usage-by-model": "GPU_MODEL"} {
		ans := graphql(t, srv, key, fmt.Sprintf(`{ organization { usage(from: %q, to: %q, groupBy: %s) { lines { key } } } }`,
			period["from"], period["to"], group))
		want := len(ans["data"].(map[string]any)["organization"].(map[string]any)["usage"].(map[string]any)["lines"].([]any))
		if got := c.plotPoints(plot); want == 0 || got != want {
			t.Errorf("%s over %v: the chart holds %d points, usage(groupBy: %s) answers %d lines", plot, period, got, group, want)
		}
	}

	// The CSV: downloaded through the page, the API's own bytes.
	dir := t.TempDir()
	if _, err := chromedp.CallBrowser(c.ctx, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
		Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: dir}); err != nil {
		t.Fatal(err)
	}
	c.within("Download CSV", chromedp.Click(`//button[.="Download CSV"]`))
	got := downloaded(t, dir)
	status, want := restGet(t, srv, key, "/v1/billing/usage?"+url.Values{"from": {period["from"]}, "to": {period["to"]}, "groupBy": {"day"}}.Encode(), "text/csv")
	if status != http.StatusOK || !bytes.Equal(got, want) || !bytes.HasPrefix(want, []byte("key,seconds,gpuSeconds,costCents\r\n")) {
		t.Errorf("downloaded %q; the API answers %d %q", got, status, want)
	}

	c.axe()
	c.onlyOwnHost()
	c.keyInSessionOnly(key)
	c.screenshot("usage")
}

// downloaded waits for the one file a download writes into dir and
// answers its bytes.
func downloaded(t *testing.T, dir string) []byte {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		files, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 1 && !strings.HasSuffix(files[0].Name(), ".crdownload") {
			b, err := os.ReadFile(filepath.Join(dir, files[0].Name()))
			if err != nil {
				t.Fatal(err)
			}
			if len(b) > 0 {
				return b
			}
		}
	}
	t.Fatal("no download within 20 s")
	return nil
}

// A key without billing.read (acme-operator) sees the API's refusal of
// the organization's money, its message and code as they are, and no
// figure.
func TestConsoleUsageRefused(t *testing.T) {
	srv := demoServer(t)
	const key = "acme-operator"
	c := openAs(t, srv, "/usage", key, "Usage")
	msg, code := apiError(t, srv, key, `{ organization { balance } }`)
	c.waitAPIError("the API's refusal on the page", "main", msg, code)
	if n, _ := chromedp.Run(c.ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-figure], [data-plot]').length`)); n != 0 {
		t.Errorf("%d figures or charts beside the refusal", n)
	}
	c.axe()
	c.onlyOwnHost()
}
