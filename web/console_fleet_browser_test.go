package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
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
// operator's admin key and for a tenant's key: the operator sees who
// holds another organization's GPUs, the tenant only counts (the API's
// freeGpuCount) and no other organization's name or id. On a generated
// fleet of 1,000 nodes, a virtualized list that mouse and keyboard scroll
// to its last node.

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

// fleetNode is a node as the API answers the Fleet page's key.
type fleetNode struct {
	Name         string
	Status       string
	FreeGpuCount int
	GPUs         []struct {
		Index  int
		Health string
		VM     *struct{ ID string }
		Holder *struct{ OrganizationID, VMID string }
	} `json:"gpus"`
}

// fleetNodes is the API's answer to key's nodes query.
func fleetNodes(t *testing.T, env demoHandles, key string) []fleetNode {
	t.Helper()
	var answer struct{ Data struct{ Nodes []fleetNode } }
	b, _ := json.Marshal(graphql(t, env.Server, key,
		`{ nodes { name status freeGpuCount gpus { index health vm { id } holder { organizationId vmId } } } }`))
	if err := json.Unmarshal(b, &answer); err != nil || len(answer.Data.Nodes) == 0 {
		t.Fatalf("nodes as %s: %s (%v)", key, b, err)
	}
	return answer.Data.Nodes
}

// fleetCounts is what node holds, as the page counts it: failed GPUs,
// healthy ones of the key's organization, free ones (freeGpuCount) and the
// rest of the healthy ones, another organization's.
func fleetCounts(n fleetNode) (failed, yours, free, others int) {
	for _, g := range n.GPUs {
		switch {
		case g.Health == "FAILED":
			failed++
		case g.VM != nil:
			yours++
		}
	}
	return failed, yours, n.FreeGpuCount, len(n.GPUs) - failed - yours - n.FreeGpuCount
}

// nodeCounts is a node row's counts in words.
func nodeCounts(n fleetNode) string {
	_, _, free, others := fleetCounts(n)
	return fmt.Sprintf("%d free · %d held by others", free, others)
}

// fleetSummary is the Fleet page's summary line as the API's answer
// makes it; others by organization where the API names holders (an
// operator's key).
func fleetSummary(nodes []fleetNode) string {
	var order []string
	byStatus := map[string]int{}
	byOrg := map[string]int{}
	gpus, failed, yours, free, others := 0, 0, 0, 0, 0
	for _, n := range nodes {
		if byStatus[n.Status] == 0 {
			order = append(order, n.Status)
		}
		byStatus[n.Status]++
		f, y, fr, o := fleetCounts(n)
		gpus, failed, yours, free, others = gpus+len(n.GPUs), failed+f, yours+y, free+fr, others+o
		for _, g := range n.GPUs {
			if g.Health == "HEALTHY" && g.VM == nil && g.Holder != nil {
				byOrg[g.Holder.OrganizationID]++
			}
		}
	}
	var statuses, orgs []string
	for _, s := range order {
		statuses = append(statuses, fmt.Sprintf("%d %s", byStatus[s], strings.ToLower(s)))
	}
	for o, c := range byOrg {
		orgs = append(orgs, fmt.Sprintf("%s %d", o, c))
	}
	sort.Strings(orgs)
	by := ""
	if len(orgs) > 0 {
		by = " (" + strings.Join(orgs, ", ") + ")"
	}
	return fmt.Sprintf("%d nodes (%s) · %d GPUs: %d failed, %d held by your organization, %d free, %d held by other organizations%s",
		len(nodes), strings.Join(statuses, ", "), gpus, failed, yours, free, others, by)
}

// shownCounts reads each node row's counts as the page shows them, the
// list scrolled to its top and then to its end (it renders only the rows
// in view).
func (c *consoleTab) shownCounts() map[string]string {
	c.t.Helper()
	shown := map[string]string{}
	for _, to := range []string{"0", "s.scrollHeight"} {
		r, err := chromedp.Run(c.ctx, chromedp.Evaluate[map[string]string](`new Promise((done) => {
		  const s = document.querySelector('.gg-fleet-scroll');
		  s.scrollTop = `+to+`;
		  requestAnimationFrame(() => requestAnimationFrame(() => {
		    const out = {};
		    for (const row of document.querySelectorAll('.gg-fleet-row')) {
		      out[row.dataset.node] = row.querySelector('.gg-fleet-counts').textContent.trim();
		    }
		    done(out);
		  }));
		})`, chromedp.EvalAwaitPromise))
		if err != nil {
			c.t.Fatalf("read the rows' counts: %v", err)
		}
		for k, v := range r {
			shown[k] = v
		}
	}
	return shown
}

// scrollToNode scrolls the list (which renders the rows in view) until
// name's row, at its place in the API's answer nodes, is its first.
func (c *consoleTab) scrollToNode(nodes []fleetNode, name string) {
	c.t.Helper()
	row := -1
	for i, n := range nodes {
		if n.Name == name {
			row = i
		}
	}
	c.within(name+" in view",
		chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelector('.gg-fleet-scroll').scrollTop = %d * 84`, row)),
		chromedp.WaitVisible(fleetRow(name)))
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
	// Every name and id of another organization: its own, and its VMs'
	// and pods'.
	var others []string
	var busy string // the name of Acme's VM on the failed GPU 3 of dgx-h100-02
	for _, o := range data.Organizations {
		if o.ID != acme {
			others = append(others, o.Name, o.ID)
		}
	}
	for _, v := range data.VMs {
		if v.OrganizationID != acme {
			others = append(others, v.Name, v.ID)
		}
		if v.ID == "vm-busy-failed-gpu" {
			busy = v.Name
		}
	}
	if len(others) < 3 || busy == "" {
		t.Fatalf("the demo's other organizations' names and ids %q, vm-busy-failed-gpu's %q", others, busy)
	}

	// Who else holds GPUs of dgx-h200-01 (Globex's VM, in the demo data):
	// the operator sees each by organization and VM id.
	type held struct {
		index   int
		org, vm string
	}
	var h200 []held
	for _, v := range data.VMs {
		for _, g := range v.GPUIDs {
			var index int
			if _, err := fmt.Sscanf(g, "dgx-h200-01-gpu-%d", &index); err == nil && v.OrganizationID != acme {
				h200 = append(h200, held{index, v.OrganizationID, v.ID})
			}
		}
	}
	if len(h200) == 0 {
		t.Fatal("no other organization holds a GPU of dgx-h200-01 in the demo data")
	}

	for _, who := range []struct {
		name, key string
		operator  bool
	}{{"operator", adminKey(t, env), true}, {"tenant", "acme-reader", false}} {
		t.Run(who.name, func(t *testing.T) {
			c := openFleet(t, env, who.key, "dgx-h100-02")
			c.within("the failed GPUs by address and XID",
				chromedp.WaitVisible(failedCell("dgx-h100-02", 3, "0000:5D:00.0 (XID 79)")),
				chromedp.WaitVisible(failedCell("dgx-a100-02", 5, "0000:AB:00.0 (XID 48)")),
				// Acme's own VM on it, by name.
				chromedp.WaitVisible(fmt.Sprintf(`%s//li[contains(@class,"gg-gpu--failed")][.//span[.=%q]]`,
					fleetRow("dgx-h100-02"), "yours: "+busy)))
			nodes := fleetNodes(t, env, who.key)
			want := fleetSummary(nodes)
			if who.operator != strings.Contains(want, "(org-") {
				t.Errorf("the API's answer to the %s names holders: %v (summary %q)", who.name, !who.operator, want)
			}
			c.within("the summary the API's answer makes",
				chromedp.WaitVisible(fmt.Sprintf(`//p[@class="gg-fleet-summary"][normalize-space(.)=%q]`, want)))
			// Each node's counts are the API's freeGpuCount and the rest.
			shown := c.shownCounts()
			for _, n := range nodes {
				if got, want := shown[n.Name], nodeCounts(n); got != want {
					t.Errorf("%s's counts: the page shows %q, the API's freeGpuCount makes %q", n.Name, got, want)
				}
			}
			text := c.pageText()
			if who.operator {
				// Another organization's GPUs by holder, in that
				// organization's colour.
				c.scrollToNode(nodes, "dgx-h200-01")
				for _, g := range h200 {
					c.within(fmt.Sprintf("GPU %d of dgx-h200-01 held by %s's %s", g.index, g.org, g.vm),
						chromedp.WaitVisible(fmt.Sprintf(`%s//li[contains(@class,"gg-gpu--org-")][starts-with(normalize-space(.), "GPU %d healthy")][.//span[.=%q]][.//span[.=%q]]`,
							fleetRow("dgx-h200-01"), g.index, g.org, g.vm)))
				}
				c.within("a legend entry for "+h200[0].org,
					chromedp.WaitVisible(fmt.Sprintf(`//ul[@aria-label="Legend"]/li[contains(normalize-space(.), "held by %s ")]`, h200[0].org)))
			} else {
				for _, name := range others {
					if strings.Contains(strings.ToLower(text), strings.ToLower(name)) {
						t.Errorf("the page shows %q, another organization's, to Acme's %s key", name, who.name)
					}
				}
			}
			c.axe()
			c.onlyOwnHost()
			if who.operator {
				// From the failed GPU of dgx-h100-02 to Globex's and
				// Initech's GPUs.
				c.scrollToNode(nodes, "dgx-h100-02")
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
