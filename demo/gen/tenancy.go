package main

// org describes one demo organization; slug prefixes its rows and tokens.
type org struct {
	slug, name string
	tenant     int
	infiniband bool
}

var orgs = []org{
	{slug: "acme", name: "Acme Robotics", tenant: 1001, infiniband: true},
	{slug: "globex", name: "Globex Vision", tenant: 1002},
	{slug: "initech", name: "Initech Bio", tenant: 1003},
}

func orgID(slug string) string { return "org-" + slug }

// keyRoles are the permission sets a real deployment hands out: people who
// operate, people who only look, a metrics pusher and the node agent.
var keyRoles = []struct {
	role        string
	permissions []string
}{
	{"operator", []string{"compute.read", "compute.operate", "workloads.read"}},
	{"reader", []string{"compute.read", "workloads.read"}},
	{"metrics", []string{"metrics.write"}},
	{"agent", []string{"nodes.report"}},
}

// prepaid is the demo's prepaid organization: a small balance that its
// running workloads spend within minutes of the server's start, so the
// metering pass stops them with auto_stopped_insufficient_balance while a
// person watches (demo/README.md, "Metering"). Its key reads its money
// (billing.read, which no other demo key holds). The balance is
// prepaidCents: Initech runs 1,891 cents an hour of GPUs and keeps a 1,000
// GB disk of a stopped VM (27.4 cents an hour), 31.97 cents a minute; the
// first pass starts its meters, each later one debits a minute, and the
// fifth finds 22.11 cents left, less than the next minute: it stops them.
const (
	prepaid      = "initech"
	prepaidCents = 150
)

func (g *gen) addTenancy() {
	for _, o := range orgs {
		row := Organization{ID: orgID(o.slug), Name: o.name, TenantID: o.tenant, InfinibandEnabled: o.infiniband}
		g.orgs[o.slug] = row
		g.f.Organizations = append(g.f.Organizations, row)
	}
	// Readable tokens, because this is demo data printed at start; real
	// keys are random.
	for _, o := range orgs {
		for _, r := range keyRoles {
			g.f.APIKeys = append(g.f.APIKeys, APIKey{
				Token:          o.slug + "-" + r.role,
				OrganizationID: orgID(o.slug),
				Permissions:    r.permissions,
			})
		}
	}
	g.f.APIKeys = append(g.f.APIKeys, APIKey{
		Token:          prepaid + "-billing",
		OrganizationID: orgID(prepaid),
		Permissions:    []string{"billing.read"},
	})
	g.f.Credits = append(g.f.Credits, Credit{
		OrganizationID: orgID(prepaid),
		Key:            "demo-prepaid",
		AmountCents:    prepaidCents,
		Reason:         "demo: a small prepaid balance that runs out within minutes of the start (demo/README.md)",
	})
}
