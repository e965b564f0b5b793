package placement

import "fmt"

// NodeOnline rejects a node that is not online.
type NodeOnline struct{}

func (NodeOnline) Name() string { return "NodeOnline" }

func (NodeOnline) Filter(req *Request, n *NodeInfo) *Status {
	switch n.State {
	case NodeStateOnline:
		return nil
	case NodeStateOffline:
		return reject(NodeOffline, "offline",
			fmt.Sprintf("node %s is offline; try again when it is back online", n.Name))
	case NodeStateRemoved:
		// The caller places a VM of a removed node afresh and never asks
		// its own node; this answer is for Place's count and for safety.
		return reject(NodeOffline, "removed",
			fmt.Sprintf("node %s has been removed", n.Name))
	}
	reason := n.Status
	if reason == "" {
		reason = "status unknown"
	}
	return reject(NodeOffline, reason,
		fmt.Sprintf("node %s is not online (status %q)", n.Name, n.Status))
}
