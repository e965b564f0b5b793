package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"gpugraph/auth"
	"gpugraph/credentials"
	"gpugraph/models"
	"gpugraph/nodeid"
	"gpugraph/store"
)

// adminCommands are the subcommands that administer credentials straight
// in the database (the first admin key of a fresh database comes from here,
// and a node's bootstrap token without any key).
var adminCommands = map[string]bool{"keys": true, "apps": true, "orgs": true, "nodes": true, "signing-key": true}

const adminUsage = `usage:
  gpugraph keys create --org ORG --permissions a,b [--expires 90d] [--name NAME]
  gpugraph keys list [--org ORG]
  gpugraph keys revoke ID
  gpugraph apps create --org ORG --permissions a,b [--expires 90d] [--name NAME]
  gpugraph apps list [--org ORG]
  gpugraph apps revoke CLIENT_ID
  gpugraph orgs create --id ID --name NAME --tenant-id N [--infiniband]
  gpugraph signing-key rotate [--drop-previous]
  gpugraph nodes enroll --node-name NAME --cluster-id ID
each takes --database-url (env DATABASE_URL) as the server does`

// admin runs one administration command: the secret a create makes goes to
// stdout alone (so KEY=$(gpugraph keys create …) works), what it made to
// stderr.
func admin(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) < 2 {
		return errors.New(adminUsage)
	}
	noun, verb := args[0], args[1]
	fs := flag.NewFlagSet("gpugraph "+noun+" "+verb, flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbURL := fs.String("database-url", os.Getenv("DATABASE_URL"), "postgres://… or sqlite:PATH (env DATABASE_URL)")
	org := fs.String("org", "", "organization id")
	perms := fs.String("permissions", "", "comma-separated permissions: "+strings.Join(auth.Permissions, ","))
	expires := fs.String("expires", "", "when it expires: 90d, 36h or an RFC 3339 instant (default never)")
	name := fs.String("name", "", "a name to know it by")
	id := fs.String("id", "", "the organization's id")
	tenant := fs.Int("tenant-id", 0, "the organization's Run:ai tenant")
	infiniband := fs.Bool("infiniband", false, "the organization's pods use InfiniBand")
	dropPrevious := fs.Bool("drop-previous", false, "forget the replaced signing key at once: tokens it signed stop working (a leaked key)")
	nodeName := fs.String("node-name", "", "the node's name, as its agent reports it")
	clusterID := fs.String("cluster-id", "", "the node's cluster")
	// Flags may come before or after the id (keys revoke ID --database-url …).
	var positional []string
	for rest := args[2:]; ; {
		if err := fs.Parse(rest); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		positional, rest = append(positional, fs.Arg(0)), fs.Args()[1:]
	}
	if verb == "create" && noun != "orgs" && noun != "nodes" && *org == "" {
		return fmt.Errorf("gpugraph %s create needs --org ORG\n%s", noun, adminUsage)
	}
	if verb != "revoke" && len(positional) > 0 {
		return fmt.Errorf("gpugraph %s %s takes no argument %q\n%s", noun, verb, positional[0], adminUsage)
	}
	st, err := store.Open(*dbURL)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		return err
	}
	svc := credentials.New(st, nil)
	caller := auth.SystemCaller()
	spec := credentials.Spec{OrganizationID: *org, Name: *name, Permissions: strings.Split(*perms, ","), Expires: *expires}
	arg := func() (string, error) {
		if len(positional) != 1 {
			return "", fmt.Errorf("gpugraph %s %s needs one id\n%s", noun, verb, adminUsage)
		}
		return positional[0], nil
	}
	switch noun + " " + verb {
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
		if noun == "apps" {
			list = svc.ListApplications
		}
		cs, err := list(ctx, caller, *org)
		if err != nil {
			return err
		}
		writeCredentials(stdout, cs)
	case "keys revoke", "apps revoke":
		target, err := arg()
		if err != nil {
			return err
		}
		revoke := svc.RevokeKey
		if noun == "apps" {
			revoke = svc.RevokeApplication
		}
		c, err := revoke(ctx, caller, target)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "revoked %s at %s\n", c.ID, models.FormatTime(*c.RevokedAt))
	case "orgs create":
		o, err := svc.CreateOrganization(ctx, caller, credentials.Organization{ID: *id, Name: *name, TenantID: *tenant, InfinibandEnabled: *infiniband})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "created organization %s (%s), tenant %d\n", o.ID, o.Name, o.TenantID)
	case "signing-key rotate":
		if err := st.RotateSigningKey(ctx, auth.NewSigningKey(), !*dropPrevious, store.Now()); err != nil {
			return err
		}
		if *dropPrevious {
			fmt.Fprintf(stdout, "rotated the access-token signing key; tokens signed with the old one stop working within %v\n", auth.KeyRefresh)
		} else {
			fmt.Fprintf(stdout, "rotated the access-token signing key; every replica signs with the new one within %v, and tokens signed with the old one work until they expire\n", auth.KeyRefresh)
		}
	case "nodes enroll":
		e, err := nodeid.New(st).Enroll(ctx, caller, *nodeName, *clusterID)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "enrolled node %s of cluster %s: its agent exchanges this one-time bootstrap token (--bootstrap-token) before %s\n",
			e.NodeName, e.ClusterID, models.FormatTime(e.ExpiresAt))
		fmt.Fprintln(stdout, e.BootstrapToken)
	default:
		return fmt.Errorf("unknown command gpugraph %s %s\n%s", noun, verb, adminUsage)
	}
	return nil
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
