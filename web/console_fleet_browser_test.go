package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"gpugraph/bench/fleetgen"
	"gpugraph/demo"
	"gpugraph/internal/auth"
	"gpugraph/internal/dataset"
	"gpugraph/internal/httpapi"
	"gpugraph/internal/services/credentials"
)

// The Fleet page: every node a row of its GPUs. On the demo, the failed
// GPUs of dgx-h100-02 and dgx-a100-02 by address and XID, for the
// operator's admin key and for a tenant's key, the tenant seeing no other
// organization's name; on a generated fleet of 1,000 nodes, a virtualized
// list that mouse and keyboard scroll to its last node.

// fleetRow is the XPath of the Fleet page's row of node name.
func fleetRow(name string) string {
	return fmt.Sprintf(`//li[contains(@class,"gg-fleet-row")][@data-node=%q]`, name)
}

// failedCell is the XPath of GPU index of node's row shown failed, with
// where (its PCI address and XID reason) in words.
func failedCell(node string, index int, where string) string {
	return fmt.Sprintf(`%s//li[contains(@class,"gg-gpu--failed")][.//b[.="failed"]][starts-with(normalize-space(.), "GPU %d failed")][.//code[.=%q]]`,
		fleetRow(node), index, where)
}

// pageText is what the page shows, as a person reads it.
func (c *consoleTab) pageText() string {
	c.t.Helper()
	s, err := chromedp.Run(c.ctx, chromedp.Evaluate[string](`document.body.innerText`))
	if err != nil {
		c.t.Fatal(err)
	}
	return s
}

// fleetSummary is the Fleet page's summary line as the API's answer to
// the nodes query of key makes it.
func fleetSummary(t *testing.T, env demoHandles, key string) string {
	t.Helper()
	var answer struct {
		Data struct {
			Nodes []struct {
				Status string
				GPUs   []struct {
					Health string
					VM     *struct{ ID string }
				} `json:"gpus"`
			}
		}
	}
	b, _ := json.Marshal(graphql(t, env.Server, key, `{ nodes { status gpus { health vm { id } } } }`))
	if err := json.Unmarshal(b, &answer); err != nil || len(answer.Data.Nodes) == 0 {
		t.Fatalf("nodes as %s: %s (%v)", key, b, err)
	}
	var order []string
	byStatus := map[string]int{}
	gpus, failed, yours := 0, 0, 0
	for _, n := range answer.Data.Nodes {
		if byStatus[n.Status] == 0 {
			order = append(order, n.Status)
		}
		byStatus[n.Status]++
		for _, g := range n.GPUs {
			gpus++
			if g.Health == "FAILED" {
				failed++
			}
			if g.VM != nil {
				yours++
			}
		}
	}
	var statuses []string
	for _, s := range order {
		statuses = append(statuses, fmt.Sprintf("%d %s", byStatus[s], strings.ToLower(s)))
	}
	return fmt.Sprintf("%d nodes (%s) · %d GPUs: %d failed, %d held by your organization, %d not held by it",
		len(answer.Data.Nodes), strings.Join(statuses, ", "), gpus, failed, yours, gpus-yours)
}

// openFleet opens the Fleet page of env with key and waits for node's row.
func openFleet(t *testing.T, env demoHandles, key, node string) *consoleTab {
	t.Helper()
	c := openConsole(t, env.Server, "/fleet")
	c.typeKey(key)
	c.waitPage("Fleet")
	c.within("the row of "+node, chromedp.WaitVisible(fleetRow(node)))
	return c
}

// adminKey makes a key of Acme with every permission (nodes.admin: the
// operator's), as the demo's start does for its banner.
func adminKey(t *testing.T, env demoHandles) string {
	t.Helper()
	k, err := env.Config.Services.Credentials.CreateKey(context.Background(), auth.SystemCaller(),
		credentials.Spec{OrganizationID: demo.Keys()[0].OrganizationID, Name: "demo-admin", Permissions: auth.Permissions})
	if err != nil {
		t.Fatal(err)
	}
	return k.Secret
}

func TestConsoleFleetFailedGPU(t *testing.T) {
	env := demoEnv(t)
	b, err := demo.JSON(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	data, err := dataset.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	acme := demo.Keys()[0].OrganizationID
	// Every name of another organization: its own, and its VMs' and pods'.
	var others []string
	var busy string // the name of Acme's VM on the failed GPU 3 of dgx-h100-02
	for _, o := range data.Organizations {
		if o.ID != acme {
			others = append(others, o.Name)
		}
	}
	for _, v := range data.VMs {
		if v.OrganizationID != acme {
			others = append(others, v.Name)
		}
		if v.ID == "vm-busy-failed-gpu" {
			busy = v.Name
		}
	}
	if len(others) < 3 || busy == "" {
		t.Fatalf("the demo's other organizations' names %q, vm-busy-failed-gpu's %q", others, busy)
	}

	for _, who := range []struct{ name, key string }{{"operator", adminKey(t, env)}, {"tenant", "acme-reader"}} {
		t.Run(who.name, func(t *testing.T) {
			c := openFleet(t, env, who.key, "dgx-h100-02")
			c.within("the failed GPUs by address and XID",
				chromedp.WaitVisible(failedCell("dgx-h100-02", 3, "0000:5D:00.0 (XID 79)")),
				chromedp.WaitVisible(failedCell("dgx-a100-02", 5, "0000:AB:00.0 (XID 48)")),
				// Acme's own VM on it, by name.
				chromedp.WaitVisible(fmt.Sprintf(`%s//li[contains(@class,"gg-gpu--failed")][.//span[.=%q]]`,
					fleetRow("dgx-h100-02"), "yours: "+busy)))
			want := fleetSummary(t, env, who.key)
			c.within("the summary the API's answer makes",
				chromedp.WaitVisible(fmt.Sprintf(`//p[@class="gg-fleet-summary"][normalize-space(.)=%q]`, want)))
			text := c.pageText()
			for _, name := range others {
				if strings.Contains(strings.ToLower(text), strings.ToLower(name)) {
					t.Errorf("the page shows %q, another organization's, to Acme's %s key", name, who.name)
				}
			}
			c.axe()
			c.onlyOwnHost()
			if who.name == "operator" {
				c.screenshot("fleet")
			}
		})
	}

	// Live: a node the operator sets leaving shows its leavingAt without a
	// reload. The stream starts when the page subscribes, so the test sets
	// a later instant again until one arrives.
	admin := adminKey(t, env)
	c := openFleet(t, env, "acme-operator", "dgx-h100-02")
	for i := 1; ; i++ {
		at := time.Now().Add(time.Duration(24+i) * time.Hour).UTC().Format("2006-01-02T15:04:05.000Z")
		r := graphql(t, env.Server, admin, fmt.Sprintf(
			`mutation { setNodeLeavingAt(id: "node-dgx-h100-02", leavingAt: %q) @idempotent(key: "fleet-leave-%d") { node { leavingAt } } }`, at, i))
		if r["errors"] != nil {
			t.Fatalf("setNodeLeavingAt: %v", r["errors"])
		}
		// The instant as the API keeps it (whole seconds).
		at = r["data"].(map[string]any)["setNodeLeavingAt"].(map[string]any)["node"].(map[string]any)["leavingAt"].(string)
		ctx, cancel := context.WithTimeout(c.ctx, 3*time.Second)
		err := chromedp.Do(ctx, chromedp.WaitVisible(fmt.Sprintf(`%s//span[@class="gg-fleet-leaving"][normalize-space(.)=%q]`,
			fleetRow("dgx-h100-02"), "leaving at "+at)))
		cancel()
		if err == nil {
			break
		}
		if i == 5 {
			t.Fatalf("dgx-h100-02 leaving at %s not shown live: %v\nthe page shows:\n%s", at, err, c.pageText())
		}
	}
}

// thousandNodes serves a generated fleet of 1,000 nodes × 8 GPUs; its
// key is fleetgen.Token(0).
func thousandNodes(t *testing.T) demoHandles {
	t.Helper()
	b, err := json.Marshal(fleetgen.Generate(fleetgen.Options{Nodes: 1000, Tenants: 2, Seed: 37}))
	if err != nil {
		t.Fatal(err)
	}
	return fixtureEnv(t, httpapi.Config{}, b)
}

// fleetRows counts the node rows in the DOM, and reads the list's size
// as its rows tell it to assistive technology.
func (c *consoleTab) fleetRows() (rendered, setSize int) {
	c.t.Helper()
	r, err := chromedp.Run(c.ctx, chromedp.Evaluate[[]int](`(() => {
	  const rows = document.querySelectorAll('.gg-fleet-row');
	  return [rows.length, rows.length ? +rows[0].getAttribute('aria-setsize') : 0];
	})()`))
	if err != nil || len(r) != 2 {
		c.t.Fatalf("count the rows: %v %v", r, err)
	}
	return r[0], r[1]
}

func TestConsoleFleetThousandNodes(t *testing.T) {
	env := thousandNodes(t)
	start := time.Now()
	c := openFleet(t, env, fleetgen.Token(0), fleetgen.NodeName(0))
	t.Logf("from opening /console/fleet to the first node's row: %s", time.Since(start).Round(time.Millisecond))
	c.within("the summary of 1,000 nodes",
		chromedp.WaitVisible(`//p[@class="gg-fleet-summary"][starts-with(normalize-space(.), "1000 nodes (1000 online) · 8000 GPUs:")]`))
	rows, size := c.fleetRows()
	t.Logf("rows in the DOM at the top: %d of %d", rows, size)
	if rows == 0 || rows > 60 || size != 1000 {
		t.Errorf("%d rows in the DOM of a list of %d, want a window of the 1000", rows, size)
	}
	if n, _ := chromedp.Run(c.ctx, chromedp.Evaluate[int](`document.querySelectorAll('.gg-gpu').length`)); n != rows*8 {
		t.Errorf("%d GPU cells for %d rows of 8", n, rows)
	}

	// A figure, not a check (no wall-clock assertions): the frames while
	// the list scrolls from top to bottom in 100 steps, one a frame.
	if f, err := chromedp.Run(c.ctx, chromedp.Evaluate[map[string]float64](`new Promise((done) => {
	  const s = document.querySelector('.gg-fleet-scroll'), step = s.scrollHeight / 100;
	  let n = 0, last = performance.now();
	  const frames = [];
	  const tick = (now) => {
	    if (n > 0) frames.push(now - last);
	    last = now;
	    if (n++ === 100) {
	      s.scrollTop = 0; frames.sort((a, b) => a - b);
	      done({frames: frames.length, medianMs: frames[49], p95Ms: frames[94], longestMs: frames[99]});
	      return;
	    }
	    s.scrollTop = n * step;
	    requestAnimationFrame(tick);
	  };
	  requestAnimationFrame(tick);
	})`, chromedp.EvalAwaitPromise)); err == nil {
		t.Logf("scrolling 1,000 nodes in %v steps, one a frame: frames of %.1f ms median, %.1f ms p95, %.1f ms longest",
			f["frames"], f["medianMs"], f["p95Ms"], f["longestMs"])
	} else {
		t.Errorf("scroll through the list: %v", err)
	}

	// Scrolling reaches the last node, still with a window of rows.
	c.within("the last node after scrolling",
		chromedp.Evaluate[chromedp.Void](`(() => { const s = document.querySelector('.gg-fleet-scroll'); s.scrollTop = s.scrollHeight; })()`),
		chromedp.WaitVisible(fleetRow(fleetgen.NodeName(999))))
	if rows, _ := c.fleetRows(); rows == 0 || rows > 60 {
		t.Errorf("%d rows in the DOM at the bottom", rows)
	}
	if n, _ := chromedp.Run(c.ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-node="`+fleetgen.NodeName(0)+`"]').length`)); n != 0 {
		t.Errorf("the first node's row is still in the DOM at the bottom of the list")
	}
	c.axe()
	c.onlyOwnHost()
}

func TestConsoleFleetKeyboard(t *testing.T) {
	env := thousandNodes(t)
	c := openFleet(t, env, fleetgen.Token(0), fleetgen.NodeName(0))
	// Tab reaches the list.
	for i := 0; ; i++ {
		if focused, _ := chromedp.Run(c.ctx, chromedp.Evaluate[bool](`document.activeElement.classList.contains('gg-fleet-scroll')`)); focused {
			t.Logf("the list is reached after %d presses of Tab", i)
			break
		}
		if i == 30 {
			t.Fatal("30 presses of Tab do not reach the list of nodes")
		}
		c.within("Tab", chromedp.KeyEvent(kb.Tab))
	}
	scrollTop := func() int {
		n, err := chromedp.Run(c.ctx, chromedp.Evaluate[int](`Math.round(document.querySelector('.gg-fleet-scroll').scrollTop)`))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	c.within("Arrow Down and Page Down", chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.PageDown))
	if top := scrollTop(); top <= 84 {
		t.Errorf("after Arrow Down and Page Down the list is scrolled %d px", top)
	}
	c.within("End: the last node", chromedp.KeyEvent(kb.End), chromedp.WaitVisible(fleetRow(fleetgen.NodeName(999))))
	c.within("Home: the first node", chromedp.KeyEvent(kb.Home), chromedp.WaitVisible(fleetRow(fleetgen.NodeName(0))))
	if top := scrollTop(); top != 0 {
		t.Errorf("after Home the list is scrolled %d px", top)
	}
	c.axe()
	c.onlyOwnHost()
}
