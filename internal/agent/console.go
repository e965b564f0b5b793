package agent

import (
	"context"
	"crypto/sha256"
	"errors"
	"net/http"

	"gpugraph/internal/agent/agentapi"
)

// consolePusher pushes the VMs' serial consoles a ConsoleReader runtime
// keeps: after each accepted heartbeat, for each VM the server listed,
// the last agentapi.ConsoleBytes of its console, when they differ from
// what was pushed (or refused) last, so an idle console costs nothing.
// A push that fails is tried again after the next heartbeat; one the
// server refuses for good (404: the VM is not on this node) is not sent
// again until the console changes. A server that refuses pushes from this
// credential kind (403: a legacy API key) or does not serve the path
// (405, an older server) gets none for the rest of the process.
type consolePusher struct {
	sent map[string][sha256.Size]byte // by VM id: what was last pushed or refused
	off  bool
}

// push pushes what changed of the consoles of the VMs in as.
func (r *reporter) pushConsoles(ctx context.Context, as []agentapi.Assignment) {
	cr, ok := r.cfg.Runtime.(ConsoleReader)
	p := &r.consoles
	if !ok || p.off {
		return
	}
	if p.sent == nil {
		p.sent = map[string][sha256.Size]byte{}
	}
	listed := make(map[string]bool, len(as))
	for _, a := range as {
		if a.Kind == agentapi.KindPod {
			continue
		}
		listed[a.ID] = true
		tail, err := cr.ConsoleTail(a.ID)
		if err != nil {
			r.log.Warn("reading a VM's console", "vm", a.ID, "err", err)
			continue
		}
		if len(tail) == 0 {
			continue
		}
		if len(tail) > agentapi.ConsoleBytes {
			tail = tail[len(tail)-agentapi.ConsoleBytes:]
		}
		sum := sha256.Sum256(tail)
		if last, ok := p.sent[a.ID]; ok && last == sum {
			continue
		}
		err = r.client.Put(ctx, agentapi.ConsolePath(a.ID), "application/octet-stream", tail)
		var se *StatusError
		var ae *AuthError
		switch {
		case err == nil:
			p.sent[a.ID] = sum
		case ctx.Err() != nil:
			return // the agent is stopping: nothing failed
		case errors.As(err, &ae), errors.As(err, &se) && se.Status == http.StatusMethodNotAllowed:
			r.log.Warn("the server takes no console pushes from this agent; VMs' consoles stay on the node", "err", err)
			p.off = true
			return
		case errors.As(err, &se) && se.Status == http.StatusNotFound:
			r.log.Warn("the server refused a VM's console", "vm", a.ID, "err", err)
			p.sent[a.ID] = sum
		default:
			r.log.Warn("pushing a VM's console failed; trying again after the next heartbeat", "vm", a.ID, "err", err)
		}
	}
	for id := range p.sent {
		if !listed[id] {
			delete(p.sent, id)
		}
	}
}
