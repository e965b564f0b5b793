package compute

// SetChosenHook has fn run after each create of s chose its node and
// before it locks it.
func (s *Service) SetChosenHook(fn func(nodeID string)) { s.onChosen = fn }
