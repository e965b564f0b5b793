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
}
