package placement

// Code is why a node cannot take a request, as a value the caller can switch
// on (as the Kubernetes scheduler framework's Code). Placement speaks no
// API: the caller turns a Code, and whether the request is a pod, into its
// answer's code and HTTP status.
type Code int

const (
	// NodeOffline: the node is offline, removed or in an unknown status.
	NodeOffline Code = iota + 1
	// NoInfiniBand: the node's agent predates InfiniBand support.
	NoInfiniBand
	// NoAMDGrant: the node's agent cannot grant AMD GPUs to a container.
	NoAMDGrant
	// NodeBusy: too few free GPUs, too little CPU, RAM or disk, or a GPU the
	// VM holds has failed; waiting for others to stop may help.
	NodeBusy
	// NoIPCapacity: the node's InfiniBand fabric has no free address.
	NoIPCapacity
	// NoCapacity: no node at all can take the request.
	NoCapacity
	// Unschedulable: no node could ever take the request, even with
	// everything on it stopped, every GPU healthy and every node online
	// (Kubernetes' UnschedulableAndUnresolvable): waiting cannot help.
	Unschedulable
)

// Codes lists every Code, for tables that must cover them all.
var Codes = []Code{NodeOffline, NoInfiniBand, NoAMDGrant, NodeBusy, NoIPCapacity, NoCapacity, Unschedulable}

func (c Code) String() string {
	switch c {
	case NodeOffline:
		return "NodeOffline"
	case NoInfiniBand:
		return "NoInfiniBand"
	case NoAMDGrant:
		return "NoAMDGrant"
	case NodeBusy:
		return "NodeBusy"
	case NoIPCapacity:
		return "NoIPCapacity"
	case NoCapacity:
		return "NoCapacity"
	case Unschedulable:
		return "Unschedulable"
	}
	return "Code(unknown)"
}

// Status is why a node cannot take a request. A nil *Status means it can.
type Status struct {
	Filter string // name of the filter that rejected the node
	Code   Code
	// Reason is short and node-independent ("offline", "too little RAM") so
	// that equal reasons of many nodes add up in Place's summary.
	Reason string
	// Message is the detailed sentence a user reads when this node alone
	// answers (the restart of a VM on its own node).
	Message string
}

// Error returns the detailed message, so that a Status can travel as an error.
func (s *Status) Error() string { return s.Message }

func reject(code Code, reason, msg string) *Status {
	return &Status{Code: code, Reason: reason, Message: msg}
}
