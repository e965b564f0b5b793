package web_test

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
)

// The console's Create page on the demo, with its node agents and the
// scheduler running (liveDemoEnv): a create that lands, a create that
// queues until Globex frees its H200s (demo/README.md, "Create and the
// queue").

// openCreate opens the Create page with key and waits for the catalog.
func openCreate(t *testing.T, env demoHandles, key string) *consoleTab {
	t.Helper()
	c := openConsole(t, env.Server, "/create")
	c.typeKey(key)
	c.waitPage("Create")
	c.within("the instance types", chromedp.WaitVisible(`//tr[@data-type="gpu_1x_h200_sxm5"]`))
	return c
}

// typeInto types s into the field with id, after what it holds.
func (c *consoleTab) typeInto(id, s string) {
	c.t.Helper()
	c.within("typing into "+id, chromedp.Focus(chromedp.CSS("#"+id)), chromedp.KeyEvent(s))
}

// setField replaces what the field with id holds by s, as typing does.
func (c *consoleTab) setField(id, s string) {
	c.t.Helper()
	c.within("setting "+id, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => {
	  const e = document.getElementById(%q); e.value = %q;
	  e.dispatchEvent(new Event(e.tagName === 'SELECT' ? 'change' : 'input', {bubbles: true}));
	})()`, id, s)))
}

// createdStatus waits until the created VM shows status.
func (c *consoleTab) createdStatus(status string) {
	c.t.Helper()
	c.within("the created VM "+status, chromedp.WaitVisible(fmt.Sprintf(`//section[@class="gg-created"][@data-status=%q]`, status)))
}

// createdID is the created VM's id.
func (c *consoleTab) createdID() string {
	c.t.Helper()
	id, err := chromedp.Run(c.ctx, chromedp.Evaluate[string](`document.querySelector('.gg-created').dataset.vmId`))
	if err != nil {
		c.t.Fatal(err)
	}
	return id
}

// A gpu_1x_h200_sxm5 chosen from the catalog by keyboard lands deploying
// (on dgx-h200-01, the one H200 node with room) and turns running live.
func TestConsoleCreateLands(t *testing.T) {
	env := liveDemoEnv(t)
	c := openCreate(t, env, "acme-operator")
	// The catalog: the type's price and what could be placed now, as the API answers them.
	typ := graphql(t, env.Server, "acme-operator", `{ instanceType(name: "gpu_1x_h200_sxm5") { pricePerHourCents capacity { clusterId nodePool available } } }`)["data"].(map[string]any)["instanceType"].(map[string]any)
	cap0 := typ["capacity"].([]any)[0].(map[string]any)
	place := fmt.Sprintf("%s/%s", cap0["clusterId"], cap0["nodePool"])
	c.within("the type's price and capacity",
		chromedp.WaitVisible(fmt.Sprintf(`//tr[@data-type="gpu_1x_h200_sxm5"]/td[.="$%.2f/h"]`, typ["pricePerHourCents"].(float64)/100)),
		chromedp.WaitVisible(fmt.Sprintf(`//tr[@data-type="gpu_1x_h200_sxm5"]//span[@data-place=%q][.=%q]`, place, fmt.Sprintf("%s: %v", place, cap0["available"]))))

	c.within("Use gpu_1x_h200_sxm5 by keyboard",
		chromedp.Focus(`//button[@aria-label="Use gpu_1x_h200_sxm5"]`),
		chromedp.KeyEvent("\r"))
	c.typeInto("gg-create-name", "h200-notebook")
	c.within("Create by keyboard", chromedp.Focus(`//form//button[@type="submit"]`), chromedp.KeyEvent("\r"))
	c.createdStatus("deploying")
	c.createdStatus("running")
	vm := graphql(t, env.Server, "acme-operator", fmt.Sprintf(`{ vm(id: %q) { name gpuCount gpuModelId status node { name } } }`, c.createdID()))["data"].(map[string]any)["vm"].(map[string]any)
	if vm["name"] != "h200-notebook" || vm["gpuCount"] != 1.0 || vm["gpuModelId"] != "h200-141gb" || vm["status"] != "RUNNING" ||
		vm["node"].(map[string]any)["name"] != "dgx-h200-01" {
		t.Errorf("the created VM: %v", vm)
	}
	c.axe()
	c.onlyOwnHost()
	c.keyInSessionOnly("acme-operator")
	c.screenshot("create")
}

// Five H200s fit no node now: the create queues, the page shows its place
// and the reason it waits as the API does, and when Globex stops its
// 4-H200 VM the scheduler places it: deploying, live.
func TestConsoleCreateQueues(t *testing.T) {
	env := liveDemoEnv(t)
	c := openCreate(t, env, "acme-operator")
	c.typeInto("gg-create-name", "h200-x5")
	c.setField("gg-create-gpuModelId", "h200-141gb")
	c.setField("gg-create-gpuCount", "5")
	c.setField("gg-create-cpuCores", "28")
	c.setField("gg-create-ramGb", "512")
	c.setField("gg-create-diskSizeGb", "2000")
	c.within("Create", chromedp.Focus(`//form//button[@type="submit"]`), chromedp.KeyEvent("\r"))
	c.createdStatus("pending")
	id := c.createdID()
	vm := graphql(t, env.Server, "acme-operator", fmt.Sprintf(`{ vm(id: %q) { status statusReason queuePosition } }`, id))["data"].(map[string]any)["vm"].(map[string]any)
	if vm["status"] != "PENDING" || vm["queuePosition"] != 2.0 {
		t.Fatalf("the API holds %v, want it pending, second in Acme's queue", vm)
	}
	c.within("its place and reason",
		chromedp.WaitVisible(`//section[@class="gg-created"]//dd[@class="gg-created-queue"][.="2"]`),
		chromedp.WaitVisible(fmt.Sprintf(`//section[@class="gg-created"]//dd[@class="gg-created-reason"][.=%q]`, vm["statusReason"])))
	c.axe()

	stop := graphql(t, env.Server, "globex-operator", `mutation { stopVm(id: "vm-globex-sdxl-h200") { status } }`)
	if stop["errors"] != nil {
		t.Fatalf("Globex's stop: %v", stop["errors"])
	}
	c.createdStatus("deploying")
	c.within("placed on dgx-h200-01", chromedp.WaitVisible(`//section[@class="gg-created"]//dd[.="dgx-h200-01"]`))
	if n, _ := chromedp.Run(c.ctx, chromedp.Evaluate[int](`document.querySelectorAll('.gg-created-queue').length`)); n != 0 {
		t.Errorf("a placed VM still shows a place in the queue")
	}
}

// A key without compute.operate (acme-reader) is not offered the form's
// submit, and is told why; the API refuses its create.
func TestConsoleCreateReader(t *testing.T) {
	env := demoEnv(t)
	c := openCreate(t, env, "acme-reader")
	c.within("why the reader cannot create",
		chromedp.WaitVisible(`//form//p[@class="gg-create-cannot"][.="This key cannot create: it lacks compute.operate."]`))
	if n, err := chromedp.Run(c.ctx, chromedp.Evaluate[int](`document.querySelectorAll('form button[type="submit"], form input[type="submit"]').length`)); err != nil || n != 0 {
		t.Errorf("the reader's form has %d submit buttons (%v), want none", n, err)
	}
	if errs := graphql(t, env.Server, "acme-reader",
		`mutation { createVm(input: {name: "reader-try", gpuModelId: "h200-141gb", gpuCount: 1}) { id } }`)["errors"]; errs == nil {
		t.Errorf("the API lets acme-reader create: the page should offer it then")
	}
	c.axe()
	c.onlyOwnHost()
}
