package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"gpugraph/demo/agents"
	"gpugraph/internal/dataset"
	"gpugraph/internal/services/scheduler"
)

// The console's VMs page on the demo: the list live through vmEvents, an
// action's refusal as the API words it, 500 rows virtualized.

// liveDemoEnv is demoEnv with what gpugraph runs beside its API on the
// demo: the demo's node agents (they turn a deploying VM running) and the
// scheduler (it places the queue when capacity frees), both against the
// test server, until the test ends.
func liveDemoEnv(t *testing.T) demoHandles {
	t.Helper()
	env := demoEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	wait, err := agents.Start(ctx, env.Store, env.Server.URL, agents.Options{Interval: 250 * time.Millisecond, StartDelay: 2 * time.Second})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	runner := scheduler.NewRunner(scheduler.New(env.Store, env.Config.Services.Compute), scheduler.Options{Interval: time.Second})
	done := make(chan struct{})
	go func() { runner.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); wait(); <-done })
	return env
}

// openVMs opens the VMs page with key and waits for its list.
func openVMs(t *testing.T, env demoHandles, key string) *consoleTab {
	t.Helper()
	c := openConsole(t, env.Server, "/vms")
	c.typeKey(key)
	c.waitPage("VMs")
	c.within("the VMs list", chromedp.WaitVisible(chromedp.CSS(`.gg-vm-row`)))
	return c
}

// find narrows the list to the rows whose name or id holds s, typed as a
// person types it.
func (c *consoleTab) find(s string) {
	c.t.Helper()
	c.within("typing "+s+" into the list's search",
		chromedp.Focus(chromedp.CSS(`#gg-vms-search`)),
		chromedp.KeyEvent(s))
}

// rowStatus waits until the row of VM id shows status.
func (c *consoleTab) rowStatus(id, status string) {
	c.t.Helper()
	c.within(fmt.Sprintf("%s's row %s", id, status),
		chromedp.WaitVisible(fmt.Sprintf(`//tr[@data-vm-id=%q]/td[@class="gg-vm-status"][.=%q]`, id, status)))
}

// A VM restarted elsewhere — here through the REST API while the page is
// open — turns deploying in its row, then running when its node's agent
// reports it, with no reload.
func TestConsoleVMsLive(t *testing.T) {
	env := liveDemoEnv(t)
	c := openVMs(t, env, "acme-operator")
	c.find("restart-ok-stopped")
	c.rowStatus("vm-restart-ok-stopped", "stopped")
	if n, _ := chromedp.Run(c.ctx, chromedp.Evaluate[int](`document.querySelectorAll('.gg-vm-row').length`)); n != 1 {
		t.Errorf("%d rows for restart-ok-stopped, want 1", n)
	}
	if code, body := call(t, env.Server, http.MethodPost, "/v1/vms/vm-restart-ok-stopped/restart", "acme-operator", nil); code != http.StatusOK {
		t.Fatalf("restart over REST: %d %v", code, body)
	}
	c.rowStatus("vm-restart-ok-stopped", "deploying")
	c.rowStatus("vm-restart-ok-stopped", "running")
	stage, err := chromedp.Run(c.ctx, chromedp.Text(`//tr[@data-vm-id="vm-restart-ok-stopped"]/td[@class="gg-vm-stage"]`))
	if err != nil || stage != "ready" {
		t.Errorf("running row's stage %q (%v), want ready", stage, err)
	}
	// Its detail: the address the API gives it and its serial console as
	// its node pushed it (Reload reads it again; the agent pushes on its
	// heartbeat).
	c.within("the detail by keyboard",
		chromedp.Focus(`//tr[@data-vm-id="vm-restart-ok-stopped"]//button[.="restart-ok-stopped"]`),
		chromedp.KeyEvent("\r"),
		chromedp.WaitVisible(`//section[@data-vm-id="vm-restart-ok-stopped"]/h2[.="restart-ok-stopped"]`))
	if got := focused(t, c.ctx); got != "gg-vm-detail-title" {
		t.Errorf("focus after opening the detail: %q", got)
	}
	for deadline := time.Now().Add(20 * time.Second); ; {
		c.within("Reload", chromedp.Click(`//button[.="Reload restart-ok-stopped"]`))
		text, _ := chromedp.Run(c.ctx, chromedp.Evaluate[string](`(document.querySelector('.gg-vm-console') || {}).textContent || ''`))
		if strings.Contains(text, "login: ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the console shows %q, want the guest's login prompt", text)
		}
		time.Sleep(300 * time.Millisecond)
	}
	want := graphql(t, env.Server, "acme-operator", `{ vm(id: "vm-restart-ok-stopped") { endpointUrl } }`)["data"].(map[string]any)["vm"].(map[string]any)
	endpoint, _ := chromedp.Run(c.ctx, chromedp.Text(`//section[@data-vm-id="vm-restart-ok-stopped"]//dd[@class="gg-vm-endpoint"]`))
	if url, _ := want["endpointUrl"].(string); url == "" || endpoint != url {
		t.Errorf("endpoint shown %q, the API answers %q", endpoint, url)
	}
	if reloads := c.countRequests("/console/vms"); reloads != 1 {
		t.Errorf("the console was loaded %d times, want once", reloads)
	}
}

// countRequests counts the page's requests to a path on its own host.
func (c *consoleTab) countRequests(path string) int {
	n := 0
	for _, r := range c.requests() {
		if strings.HasSuffix(r.URL, path) || strings.Contains(r.URL, path+"?") {
			n++
		}
	}
	return n
}

// A restart of the seed's busy VM, by Tab and Enter, shows the API's own
// refusal: its message naming the failed GPU by address, its code, and a
// countdown from its retryAfter; a key without compute.operate gets the
// API's 403 the same way.
func TestConsoleVMsBusyRestart(t *testing.T) {
	env := demoEnv(t)
	c := openVMs(t, env, "acme-operator")
	c.find("busy-failed-gpu")
	c.rowStatus("vm-busy-failed-gpu", "running")
	// From the search field, Tab reaches the list's region, the row's
	// name, then its Restart.
	c.within("Tab to Restart", chromedp.KeyEvent("\t\t\t"))
	if got, _ := chromedp.Run(c.ctx, chromedp.Evaluate[string](`document.activeElement.getAttribute('aria-label')`)); got != "Restart busy-failed-gpu" {
		t.Fatalf("three Tabs from the search field reach %q, want Restart busy-failed-gpu", got)
	}
	c.within("Restart by Enter",
		chromedp.KeyEvent("\r"),
		chromedp.WaitVisible(`//div[@data-vm-id="vm-busy-failed-gpu"]//div[@role="alert"]`))
	shown := c.shownError(`//div[@data-vm-id="vm-busy-failed-gpu"]`)
	answer := graphql(t, env.Server, "acme-operator", `mutation { restartVm(id: "vm-busy-failed-gpu") { id } }`)["errors"].([]any)[0].(map[string]any)
	ext := answer["extensions"].(map[string]any)
	if shown["message"] != answer["message"] || shown["code"] != "VM_NODE_BUSY" || shown["code"] != ext["code"] ||
		shown["retryAfter"] != fmt.Sprint(ext["retryAfter"]) || !strings.Contains(shown["message"], "0000:5D:00.0 (XID 79)") {
		t.Errorf("shown %q\nthe API answers %v", shown, answer)
	}
	if !strings.HasPrefix(shown["countdown"], "retry in ") {
		t.Errorf("countdown %q", shown["countdown"])
	}
	c.axe()
	c.onlyOwnHost()
	c.keyInSessionOnly("acme-operator")
	c.screenshot("vms")

	// The reader may not (the API answers its restart 403): its key is
	// offered no action, in the list or in a VM's detail, and told why.
	r := openVMs(t, env, "acme-reader")
	r.find("restart-ok-running")
	r.within("the reader's list, without actions",
		chromedp.WaitVisible(`//tr[@data-vm-id="vm-restart-ok-running"]`),
		chromedp.WaitVisible(`//p[@class="gg-vms-cannot"][.="This key cannot restart, stop or terminate: it lacks compute.operate."]`),
		chromedp.Click(`//tr[@data-vm-id="vm-restart-ok-running"]//button[@class="gg-link"]`),
		chromedp.WaitVisible(`//section[@class="gg-vm-detail"]//dd/code[.="vm-restart-ok-running"]`))
	if n, err := chromedp.Run(r.ctx, chromedp.Evaluate[int](`document.querySelectorAll('button.gg-act, .gg-vm-actions').length + [...document.querySelectorAll('th')].filter((th) => th.textContent === 'Actions').length`)); err != nil || n != 0 {
		t.Errorf("the reader's page has %d action buttons or cells (%v), want none", n, err)
	}
	if errs := graphql(t, env.Server, "acme-reader", `mutation { restartVm(id: "vm-restart-ok-running") { id } }`)["errors"]; errs == nil {
		t.Errorf("the API lets acme-reader restart: the page should offer it then")
	}
	r.axe()
}

// shownError is the first error line shown under the element at xpath:
// its message, code, and retryAfter and countdown when it has them.
func (c *consoleTab) shownError(xpath string) map[string]string {
	c.t.Helper()
	shown, err := chromedp.Run(c.ctx, chromedp.Evaluate[map[string]string](fmt.Sprintf(`(() => {
	  const e = document.evaluate(%q, document, null, XPathResult.FIRST_ORDERED_NODE_TYPE, null).singleNodeValue.querySelector('.gg-error li');
	  const r = e.querySelector('.gg-retry');
	  return {message: e.querySelector('.gg-error-message').textContent, code: e.querySelector('.gg-error-code').textContent,
	    retryAfter: r ? r.dataset.retryAfter : '', countdown: r ? r.textContent : ''};
	})()`, xpath)))
	if err != nil {
		c.t.Fatal(err)
	}
	return shown
}

// 500 more VMs of Acme in the store: the list renders only the rows in
// view (far fewer than 500 row elements), and scrolling to the end
// reaches the last.
func TestConsoleVMs500(t *testing.T) {
	env := demoEnv(t)
	var vms []map[string]any
	at := time.Now().Add(-24 * time.Hour).UTC()
	for i := range 500 {
		vms = append(vms, map[string]any{
			"id": fmt.Sprintf("vm-many-%03d", i), "name": fmt.Sprintf("many-%03d", i), "organizationId": "org-acme",
			"status": "terminated", "statusReason": "user_terminated", "createdAt": at.Add(time.Duration(i) * time.Second).Format(time.RFC3339Nano),
			"diskSizeGb": 100, "gpuCount": 1, "gpuModelId": "h100-80gb", "pricePerHourCents": 249, "provisioningStage": "ready",
			"resourceSize": "1x-h100-80gb", "tier": "standard", "nodeId": "node-dgx-h100-01", "gpuIds": []string{}, "cpuCores": 14, "ramGb": 224,
		})
	}
	b, _ := json.Marshal(map[string]any{"vms": vms})
	if _, err := dataset.LoadFile(context.Background(), env.Store, b); err != nil {
		t.Fatal(err)
	}
	all := graphql(t, env.Server, "acme-operator", `{ vms(limit: 1) { total } }`)["data"].(map[string]any)["vms"].(map[string]any)
	total := int(all["total"].(float64))
	if total < 500 {
		t.Fatalf("%d VMs of Acme, want 500 more than the demo's", total)
	}
	lastPage := graphql(t, env.Server, "acme-operator", fmt.Sprintf(`{ vms(offset: %d, limit: 1) { vms { id } } }`, total-1))
	last := lastPage["data"].(map[string]any)["vms"].(map[string]any)["vms"].([]any)[0].(map[string]any)["id"].(string)

	c := openVMs(t, env, "acme-operator")
	c.within("the whole list loaded",
		chromedp.WaitVisible(fmt.Sprintf(`//table/caption[starts-with(normalize-space(.), "%d VMs")]`, total)),
		chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.querySelector('select').options[0].textContent === 'all (%d)'`, total)))
	// The status filter narrows the rows loaded to the API's count of that status.
	terminated := graphql(t, env.Server, "acme-operator", `{ vms(status: [TERMINATED], limit: 1) { total } }`)["data"].(map[string]any)["vms"].(map[string]any)["total"]
	c.setField("gg-vms-status", "TERMINATED")
	c.within("the terminated ones", chromedp.WaitVisible(fmt.Sprintf(`//table/caption[.="%d VMs and pods of this organization, %v shown"]`, total, terminated)))
	c.setField("gg-vms-status", "")
	rows := func() int {
		n, err := chromedp.Run(c.ctx, chromedp.Evaluate[int](`document.querySelectorAll('tbody tr.gg-vm-row').length`))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := rows(); n == 0 || n > 60 {
		t.Errorf("%d row elements for %d VMs, want only those in view", n, total)
	}
	c.within("scrolling to the end",
		chromedp.Evaluate[chromedp.Void](`(() => { const s = document.querySelector('.gg-vms-scroll'); s.scrollTop = s.scrollHeight; })()`),
		chromedp.WaitVisible(fmt.Sprintf(`//tr[@data-vm-id=%q]`, last)))
	if n := rows(); n == 0 || n > 60 {
		t.Errorf("%d row elements at the end of %d VMs, want only those in view", n, total)
	}
	c.axe()
}
