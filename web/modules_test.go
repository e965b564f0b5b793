package web

import (
	"os/exec"
	"testing"
)

// The playground's own modules (key handling, the storage that keeps
// headers off disk, the precompressed copies) have unit tests in
// build/playground.test.mjs; they need only node, no installed modules.
func TestPlaygroundModules(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Log("\n\n*** NO NODE: build/playground.test.mjs did not run; install nodejs to run it. ***\n")
		t.Skip("node not found")
	}
	out, err := exec.Command(node, "--test", "build/playground.test.mjs").CombinedOutput()
	if err != nil {
		t.Fatalf("node --test: %v\n%s", err, out)
	}
}
