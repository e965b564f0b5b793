package placement

// Filter is one check of whether a node can take a request. Filter returns
// nil when the node passes, or a Status whose Reason is short and the same
// for every node rejected for the same cause, and whose Message names this
// node's details. Filters must not modify the request or the node.
type Filter interface {
	Name() string
	Filter(req *Request, n *NodeInfo) *Status
}
