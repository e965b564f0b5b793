package compute

// SetChosenHook has fn run after each create chose its node and before it
// locks it, until the test ends.
func SetChosenHook(t interface{ Cleanup(func()) }, fn func(nodeID string)) {
	chosenHook = fn
	t.Cleanup(func() { chosenHook = nil })
}
