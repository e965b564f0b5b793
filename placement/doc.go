// Package placement decides whether a VM or pod fits on a node, and which
// node a VM or pod whose node was removed should move to.
//
// It follows the shape of the Kubernetes scheduler framework: a list of small
// filters, each of which either passes a node or rejects it with a Status that
// says why, followed by a score that ranks the nodes that passed. The same
// filters serve both uses of restartVm, so a node refused on its own and a
// node counted in a "0/N nodes can take it" summary are refused for the same
// reason:
//
//   - [Framework.CheckOwnNode] runs the filters on the node that holds a
//     stopped or failed VM's disk (or a pod's volume) and answers the first
//     failure with its [Code] and a detailed message.
//   - [Framework.Place] runs the filters on every node of a snapshot, ranks
//     the nodes that pass with the score, and picks the GPUs to claim; when
//     none passes it answers [NoCapacity] with a summary that counts each
//     node's first failing reason.
//   - [CheckRunning] refuses to reboot a running VM or pod on a failed GPU.
//   - [PickGPUs] chooses the GPUs to claim on a node.
//
// The package is pure: it reads a snapshot the caller loaded (under row locks,
// inside the transaction that then writes the claim) and never mutates it.
//
// "Free" always means capacity minus what the others hold: a GPU, a share of
// CPU/RAM/disk or an InfiniBand address held by the requesting VM itself counts
// as free for it, so a snapshot taken while it still holds something gives the
// same answer as one taken after it let go.
//
// Placement speaks no API: a [Status] carries a typed [Code], and the caller
// (package compute) maps a Code, with whether the request is a pod, to its
// answer's error code, HTTP status and Retry-After.
//
// To add a filter, write a type that implements [Filter] (one small file,
// filter_*.go) and put it in the slice in [Default] at the position where its
// check belongs; its Reason then shows up in Place's summary automatically.
package placement
