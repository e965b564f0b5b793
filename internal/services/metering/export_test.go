package metering

// OnBatch sets the function told after every committed batch (nil: none).
func OnBatch(s *Service, f func(Result)) { s.onBatch = f }
