package placement

import "fmt"

// InfiniBandAgent rejects, for a pod that needs an InfiniBand address, a node
// whose agent predates InfiniBand support.
type InfiniBandAgent struct{}

func (InfiniBandAgent) Name() string { return "InfiniBandAgent" }

func (InfiniBandAgent) Filter(req *Request, n *NodeInfo) *Status {
	if !NeedsInfiniBand(req, n) || AgentAtLeast(n.AgentVersion, MinAgentInfiniBand) {
		return nil
	}
	return reject(NoInfiniBand, "agent too old for InfiniBand",
		fmt.Sprintf("node %s runs %s; InfiniBand needs %s or later",
			n.Name, describeAgent(n.AgentVersion), MinAgentInfiniBand))
}
