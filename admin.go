package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"gpugraph/internal/auth"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/services"
	"gpugraph/internal/services/credentials"
	"gpugraph/internal/store"
	"gpugraph/models"
)

// adminCommand is one administration subcommand: it works straight in the
// database (the first admin key of a fresh database comes from here, and a
// node's bootstrap token without any key).
type adminCommand struct {
	noun, verb string
	args       string   // its positional argument, if any
	flags      []string // the flags it takes besides --database-url, in usage order
	required   []string // those it cannot do without
	summary    string
}

// adminCmds are the subcommands, in the order the help lists them.
var adminCmds = []adminCommand{
	{noun: "keys", verb: "create", flags: []string{"org", "permissions", "expires", "name"}, required: []string{"org", "permissions"},
		summary: "make an API key of an organization; the key alone goes to stdout (shown once: KEY=$(gpugraph keys create …)), what was made to stderr"},
	{noun: "keys", verb: "list", flags: []string{"org"},
		summary: "list API keys (every organization's unless --org): id, organization, name, permissions, created, last used, expires, revoked; never a secret"},
	{noun: "keys", verb: "revoke", args: "ID|KEY",
		summary: "revoke an API key, named by its id (keys list) or by the key itself; it answers 401 from its next request on"},
	{noun: "apps", verb: "create", flags: []string{"org", "permissions", "expires", "name"}, required: []string{"org", "permissions"},
		summary: "make an application (Run:ai client credentials for POST /api/v1/token); stdout: clientId …, clientSecret … (shown once)"},
	{noun: "apps", verb: "list", flags: []string{"org"},
		summary: "list applications (every organization's unless --org); never a secret"},
	{noun: "apps", verb: "revoke", args: "CLIENT_ID",
		summary: "revoke an application: its secret and every access token it was given stop working"},
	{noun: "orgs", verb: "create", flags: []string{"id", "name", "tenant-id", "infiniband"}, required: []string{"id", "name", "tenant-id"},
		summary: "make an organization (one per Run:ai tenant)"},
	{noun: "orgs", verb: "list",
		summary: "list organizations: id, name, Run:ai tenant, InfiniBand, state"},
	{noun: "signing-key", verb: "rotate", flags: []string{"drop-previous"},
		summary: "replace the access-token signing key every replica shares"},
	{noun: "nodes", verb: "enroll", flags: []string{"node-name", "cluster-id"}, required: []string{"node-name", "cluster-id"},
		summary: "enroll a node: its one-time bootstrap token alone goes to stdout, for its agent's --bootstrap-token"},
	{noun: "clusters", verb: "enroll", flags: []string{"cluster-id", "tenant-id"}, required: []string{"cluster-id", "tenant-id"},
		summary: "enroll a Kubernetes cluster's connector: its credential (gpgcl_…) alone goes to stdout, shown once, for cluster-agent's --credential-file; enrolling again rotates it"},
	{noun: "clusters", verb: "revoke", args: "CLUSTER_ID",
		summary: "revoke a cluster's credential: its connector is refused from its next batch on; the pods it reported stay"},
	{noun: "billing", verb: "reconcile", flags: []string{"from", "to", "org"}, required: []string{"from", "to"},
		summary: "recompute usage over whole UTC hours from the event log and compare it with the usage records and the ledgers' debits; every difference is printed, and any makes the exit status 1"},
}

// adminNouns are the first words that name a subcommand (and "help").
var adminNouns = func() map[string]bool {
	m := map[string]bool{}
	for _, c := range adminCmds {
		m[c.noun] = true
	}
	return m
}()

// adminFlag is one flag of the subcommands: its value's name in usage
// lines ("" for a boolean) and its help.
type adminFlag struct{ value, help string }

var adminFlags = map[string]adminFlag{
	"org":           {"ORG", "`ORG`: the organization's id (gpugraph orgs list shows them)"},
	"permissions":   {"a,b", "comma-separated permissions (`a,b`): " + strings.Join(auth.Permissions, ",")},
	"expires":       {"90d", "when it expires: `90d`, 36h or an RFC 3339 instant (default never)"},
	"name":          {"NAME", "a `NAME` to know it by"},
	"id":            {"ID", "the organization's `ID`"},
	"tenant-id":     {"N", "a Run:ai tenant, a positive integer `N`: for orgs create one no other organization holds, for clusters enroll an organization's"},
	"infiniband":    {"", "the organization's pods use InfiniBand"},
	"drop-previous": {"", "forget the replaced signing key at once: tokens it signed stop working (a leaked key)"},
	"node-name":     {"NAME", "the node's `NAME`, as its agent reports it"},
	"cluster-id":    {"ID", "the cluster's `ID` (a node's cluster; for clusters enroll, the cluster's UUID)"},
	"from":          {"TIME", "the window's start, a whole UTC hour as RFC 3339 (`TIME`: 2026-12-01T00:00:00Z)"},
	"to":            {"TIME", "the window's end, a whole UTC hour as RFC 3339 (`TIME`), after from"},
}

// usageLine is c's synopsis: gpugraph keys create --org ORG … [--name NAME].
func (c adminCommand) usageLine() string {
	parts := []string{"gpugraph", c.noun, c.verb}
	if c.args != "" {
		parts = append(parts, c.args)
	}
	for _, name := range c.flags {
		f := "--" + name
		if v := adminFlags[name].value; v != "" {
			f += " " + v
		}
		if !slices.Contains(c.required, name) {
			f = "[" + f + "]"
		}
		parts = append(parts, f)
	}
	return strings.Join(parts, " ")
}

// adminUsage lists every subcommand.
var adminUsage = func() string {
	var b strings.Builder
	b.WriteString("usage:\n")
	for _, c := range adminCmds {
		b.WriteString("  " + c.usageLine() + "\n")
	}
	b.WriteString("each takes --database-url (env DATABASE_URL) as the server does; gpugraph COMMAND --help says more")
	return b.String()
}()

// nounUsage lists noun's subcommands with what each does.
func nounUsage(noun string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "usage of gpugraph %s:\n", noun)
	for _, c := range adminCmds {
		if c.noun == noun {
			fmt.Fprintf(&b, "  %s\n      %s\n", c.usageLine(), c.summary)
		}
	}
	fmt.Fprintf(&b, "each takes --database-url (env DATABASE_URL) as the server does; gpugraph %s VERB --help lists its flags", noun)
	return b.String()
}

func findAdminCommand(noun, verb string) (adminCommand, bool) {
	for _, c := range adminCmds {
		if c.noun == noun && c.verb == verb {
			return c, true
		}
	}
	return adminCommand{}, false
}

func isHelp(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help" || arg == "help"
}

// adminValues are the parsed flags of one subcommand.
type adminValues struct {
	dbURL, org, perms, expires, name, id, nodeName, clusterID string
	from, to                                                  string
	tenant                                                    int
	infiniband, dropPrevious                                  bool
}

// flagSet is c's own flags, and --database-url.
func (c adminCommand) flagSet(v *adminValues) *flag.FlagSet {
	fs := flag.NewFlagSet("gpugraph "+c.noun+" "+c.verb, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // admin says what was wrong, and prints --help to stdout
	fs.Usage = func() {}
	fs.StringVar(&v.dbURL, "database-url", os.Getenv("DATABASE_URL"),
		"the database `URL`: postgres://… or sqlite:PATH; unset means SQLite in "+store.DefaultSQLitePath+", the server's default (env DATABASE_URL)")
	for _, name := range c.flags {
		help := adminFlags[name].help
		switch name {
		case "org":
			fs.StringVar(&v.org, name, "", help)
		case "permissions":
			fs.StringVar(&v.perms, name, "", help)
		case "expires":
			fs.StringVar(&v.expires, name, "", help)
		case "name":
			fs.StringVar(&v.name, name, "", help)
		case "id":
			fs.StringVar(&v.id, name, "", help)
		case "tenant-id":
			fs.IntVar(&v.tenant, name, 0, help)
		case "infiniband":
			fs.BoolVar(&v.infiniband, name, false, help)
		case "drop-previous":
			fs.BoolVar(&v.dropPrevious, name, false, help)
		case "node-name":
			fs.StringVar(&v.nodeName, name, "", help)
		case "cluster-id":
			fs.StringVar(&v.clusterID, name, "", help)
		case "from":
			fs.StringVar(&v.from, name, "", help)
		case "to":
			fs.StringVar(&v.to, name, "", help)
		}
	}
	return fs
}

// help is c's --help: its synopsis, what it does, its flags.
func (c adminCommand) help(w io.Writer) {
	fmt.Fprintf(w, "usage: %s\n\n%s.\n\nflags:\n", c.usageLine(), c.summary)
	fs := c.flagSet(&adminValues{})
	fs.SetOutput(w)
	fs.PrintDefaults()
}

// admin runs one administration command: the secret a create makes goes to
// stdout alone (so KEY=$(gpugraph keys create …) works), what it made to
// stderr. --help at each level prints to stdout.
func admin(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	noun := args[0]
	if len(args) < 2 || strings.HasPrefix(args[1], "-") && !isHelp(args[1]) {
		return fmt.Errorf("gpugraph %s needs a command\n%s", noun, nounUsage(noun))
	}
	verb := args[1]
	if isHelp(verb) {
		fmt.Fprintln(stdout, nounUsage(noun))
		return nil
	}
	c, ok := findAdminCommand(noun, verb)
	if !ok {
		return fmt.Errorf("unknown command gpugraph %s %s\n%s", noun, verb, adminUsage)
	}
	var v adminValues
	fs := c.flagSet(&v)
	// Flags may come before or after the id (keys revoke ID --database-url …).
	var positional []string
	for rest := args[2:]; ; {
		err := fs.Parse(rest)
		if errors.Is(err, flag.ErrHelp) || len(fs.Args()) > 0 && fs.Arg(0) == "help" {
			c.help(stdout)
			return nil
		}
		if err != nil {
			return fmt.Errorf("%v\nusage: %s (gpugraph %s %s --help says more)", err, c.usageLine(), noun, verb)
		}
		if fs.NArg() == 0 {
			break
		}
		positional, rest = append(positional, fs.Arg(0)), fs.Args()[1:]
	}
	if noun != "orgs" && slices.Contains(c.required, "org") && v.org == "" {
		return fmt.Errorf("gpugraph %s create needs --org ORG (gpugraph orgs list shows them)\nusage: %s", noun, c.usageLine())
	}
	if c.args == "" && len(positional) > 0 {
		return fmt.Errorf("gpugraph %s %s takes no argument %q\nusage: %s", noun, verb, positional[0], c.usageLine())
	}
	if c.args != "" && len(positional) != 1 {
		return fmt.Errorf("gpugraph %s %s needs one %s\nusage: %s", noun, verb, c.args, c.usageLine())
	}
	st, err := store.Open(v.dbURL)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		return err
	}
	// The command line is a process of its own: it builds the services as
	// the server does (services.New), and calls them as the system.
	svc := services.New(st, services.Config{})
	err = doAdmin(ctx, c, v, positional, svc, stdout, stderr)
	if e, ok := apierr.As(err); ok && e.Code == credentials.CodeOrganizationNotFound && v.org != "" {
		return unknownOrganization(ctx, svc.Credentials, v.org, err)
	}
	return err
}

// doAdmin does what c says, with its flags v and argument.
func doAdmin(ctx context.Context, c adminCommand, v adminValues, positional []string, all *services.Services, stdout, stderr io.Writer) error {
	caller := auth.SystemCaller()
	svc := all.Credentials
	spec := credentials.Spec{OrganizationID: v.org, Name: v.name, Permissions: strings.Split(v.perms, ","), Expires: v.expires}
	switch c.noun + " " + c.verb {
	case "keys create":
		k, err := svc.CreateKey(ctx, caller, spec)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "created API key %s of %s holding %s (shown once: keep it now)\n", k.ID, k.OrganizationID, k.Permissions)
		fmt.Fprintln(stdout, k.Secret)
	case "apps create":
		a, err := svc.CreateApplication(ctx, caller, spec)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "created application %s of %s holding %s (the secret is shown once: keep it now)\n", a.ID, a.OrganizationID, a.Permissions)
		fmt.Fprintf(stdout, "clientId %s\nclientSecret %s\n", a.ID, a.Secret)
	case "keys list", "apps list":
		list := svc.ListKeys
		if c.noun == "apps" {
			list = svc.ListApplications
		}
		cs, err := list(ctx, caller, v.org)
		if err != nil {
			return err
		}
		writeCredentials(stdout, cs)
	case "keys revoke", "apps revoke":
		target := positional[0]
		revoke := svc.RevokeKey
		if c.noun == "apps" {
			revoke = svc.RevokeApplication
		} else if strings.HasPrefix(target, credentials.KeyPrefix) {
			// The key itself (a leaked one, or KEY of keys create): its id
			// is the first digits of its hash, as keys list shows it.
			target = models.KeyIDOf(auth.HashToken(target))
		}
		cr, err := revoke(ctx, caller, target)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "revoked %s at %s\n", cr.ID, models.FormatTime(*cr.RevokedAt))
	case "orgs create":
		o, err := svc.CreateOrganization(ctx, caller, credentials.Organization{ID: v.id, Name: v.name, TenantID: v.tenant, InfinibandEnabled: v.infiniband})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "created organization %s (%s), tenant %d\n", o.ID, o.Name, o.TenantID)
	case "orgs list":
		orgs, err := svc.ListOrganizations(ctx, caller)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tNAME\tTENANT\tINFINIBAND\tSTATE")
		for _, o := range orgs {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%v\t%s\n", o.ID, o.Name, o.TenantID, o.InfinibandEnabled, o.State)
		}
		_ = tw.Flush()
	case "signing-key rotate":
		if err := svc.RotateSigningKey(ctx, caller, !v.dropPrevious); err != nil {
			return err
		}
		if v.dropPrevious {
			fmt.Fprintf(stdout, "rotated the access-token signing key; tokens signed with the old one stop working within %v\n", auth.KeyRefresh)
		} else {
			fmt.Fprintf(stdout, "rotated the access-token signing key; every replica signs with the new one within %v, and tokens signed with the old one work until they expire\n", auth.KeyRefresh)
		}
	case "nodes enroll":
		e, err := all.NodeID.Enroll(ctx, caller, v.nodeName, v.clusterID)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "enrolled node %s of cluster %s: its agent exchanges this one-time bootstrap token (--bootstrap-token) before %s\n",
			e.NodeName, e.ClusterID, models.FormatTime(e.ExpiresAt))
		fmt.Fprintln(stdout, e.BootstrapToken)
	case "clusters enroll":
		e, err := all.Clusters.Enroll(ctx, caller, v.clusterID, v.tenant)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "enrolled cluster %s for tenant %d: its connector sends this credential (shown once: keep it now, as a Secret for cluster-agent --credential-file); an earlier one is refused from now on\n",
			e.ClusterID, e.TenantID)
		fmt.Fprintln(stdout, e.Credential)
	case "clusters revoke":
		id, err := all.Clusters.Revoke(ctx, caller, positional[0])
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "revoked cluster %s's credential; the pods it reported stay\n", id)
	case "billing reconcile":
		return reconcile(ctx, c, v, all, stdout)
	}
	return nil
}

// errDifferences is what billing reconcile answers when it found any: the
// exit status is then 1.
var errDifferences = errors.New("the usage closed and the event log or the ledgers differ")

// reconcile is billing reconcile: every difference on a line of its own,
// then what was compared.
func reconcile(ctx context.Context, c adminCommand, v adminValues, all *services.Services, stdout io.Writer) error {
	var from, to time.Time
	for _, f := range []struct {
		name, value string
		at          *time.Time
	}{{"from", v.from, &from}, {"to", v.to, &to}} {
		if f.value == "" {
			return fmt.Errorf("gpugraph billing reconcile needs --%s TIME\nusage: %s", f.name, c.usageLine())
		}
		t, err := time.Parse(time.RFC3339, f.value)
		if err != nil {
			return fmt.Errorf("--%s %q: not an RFC 3339 instant such as 2026-12-01T00:00:00Z", f.name, f.value)
		}
		*f.at = t
	}
	r, err := all.Metering.Reconcile(ctx, auth.SystemCaller(), from, to, v.org)
	if err != nil {
		return err
	}
	for _, d := range r.Differences {
		fmt.Fprintln(stdout, d)
	}
	fmt.Fprintf(stdout, "reconciled %s to %s: %d workloads, %d usage records, %d prepaid organizations' ledgers; %d workloads not in the event log; %d differences\n",
		r.From.Format(time.RFC3339), r.To.Format(time.RFC3339), r.Workloads, r.Records, r.Organizations, r.Unverifiable, len(r.Differences))
	if len(r.Differences) > 0 {
		return errDifferences
	}
	return nil
}

// maxNamedOrganizations is how many known organizations an unknown one's
// error names.
const maxNamedOrganizations = 3

// unknownOrganization is err (organization org not found) saying which
// organizations exist: the one meant, when org is another's id without
// its prefix or its name, and up to a few others. The command line is the
// platform operator's, who may read every organization.
func unknownOrganization(ctx context.Context, svc *credentials.Service, org string, err error) error {
	orgs, lerr := svc.ListOrganizations(ctx, auth.SystemCaller())
	if lerr != nil {
		return err
	}
	if len(orgs) == 0 {
		return fmt.Errorf("%w; there is no organization yet: gpugraph orgs create --id ID --name NAME --tenant-id N makes one", err)
	}
	for _, o := range orgs {
		if strings.HasSuffix(o.ID, "-"+org) || strings.EqualFold(o.Name, org) {
			return fmt.Errorf("%w; did you mean %s (%s)? gpugraph orgs list lists them all", err, o.ID, o.Name)
		}
	}
	var named []string
	for _, o := range orgs[:min(len(orgs), maxNamedOrganizations)] {
		named = append(named, fmt.Sprintf("%s (%s)", o.ID, o.Name))
	}
	known := strings.Join(named, ", ")
	if more := len(orgs) - len(named); more > 0 {
		known += fmt.Sprintf(" and %d more", more)
	}
	return fmt.Errorf("%w; known organizations: %s; gpugraph orgs list lists them all", err, known)
}

func writeCredentials(w io.Writer, cs []credentials.Credential) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tORGANIZATION\tNAME\tPERMISSIONS\tCREATED\tLAST USED\tEXPIRES\tREVOKED")
	for _, c := range cs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.ID, c.OrganizationID, orDash(c.Name),
			strings.ReplaceAll(c.Permissions, " ", ","), models.FormatTime(c.CreatedAt),
			timeOrDash(c.LastUsedAt), timeOrDash(c.ExpiresAt), timeOrDash(c.RevokedAt))
	}
	_ = tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func timeOrDash(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return models.FormatTime(*t)
}
