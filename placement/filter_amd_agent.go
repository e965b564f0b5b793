package placement

import (
	"fmt"
	"strings"
)

// AMDAgent rejects, for a pod on AMD GPUs, a node whose agent cannot yet
// grant AMD GPUs to a container.
type AMDAgent struct{}

func (AMDAgent) Name() string { return "AMDAgent" }

func (AMDAgent) Filter(req *Request, n *NodeInfo) *Status {
	if !req.Pod || req.GPUCount <= 0 || !strings.EqualFold(req.GPUModel.Manufacturer, "AMD") ||
		AgentAtLeast(n.AgentVersion, MinAgentAMD) {
		return nil
	}
	return reject(NoAMDGrant, "agent too old for AMD GPUs",
		fmt.Sprintf("node %s runs %s; AMD GPUs need %s or later",
			n.Name, describeAgent(n.AgentVersion), MinAgentAMD))
}
