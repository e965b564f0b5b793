package placement

import (
	"fmt"
	"strings"

	"golang.org/x/mod/semver"
)

// Minimum node agent versions, from the restartVm contract.
const (
	MinAgentInfiniBand = "2.4.0" // first agent that wires pods to an InfiniBand fabric
	MinAgentAMD        = "2.6.0" // first agent that grants AMD GPUs to pods
)

// AgentAtLeast reports whether agent version have is at least want, by
// semantic-versioning precedence as golang.org/x/mod/semver reads it: a
// leading "v" or "V" and surrounding spaces are accepted ("v2.4.0"), a
// missing minor or patch counts as 0 ("2.4" is 2.4.0), build metadata
// ("+abc") is ignored, and a pre-release is older than its release
// ("2.4.0-rc1" < "2.4.0" < "2.4.1-rc1").
//
// An empty or unparseable have is older than any requirement: an agent that
// cannot say what it is must not be handed a capability it may not have.
// Unparseable is semver.org's reading: a number with a leading zero, in the
// version or a pre-release identifier ("2.4.0-rc.01"), is not a version.
// An unparseable want is a programming error and also answers false.
func AgentAtLeast(have, want string) bool {
	h, w := semverOf(have), semverOf(want)
	return semver.IsValid(h) && semver.IsValid(w) && semver.Compare(h, w) >= 0
}

// semverOf spells an agent version as package semver wants it: with its
// "v", without spaces.
func semverOf(s string) string {
	s = strings.TrimSpace(s)
	return "v" + strings.TrimPrefix(strings.TrimPrefix(s, "v"), "V")
}

// describeAgent names a node's agent version for a message.
func describeAgent(v string) string {
	if strings.TrimSpace(v) == "" {
		return "a node agent of unknown version"
	}
	if !semver.IsValid(semverOf(v)) {
		return fmt.Sprintf("an unrecognised node agent version %q", v)
	}
	return "node agent " + v
}
