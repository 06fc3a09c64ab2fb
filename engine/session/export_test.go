package session

// export_test.go: internals the external tests and benchmarks reach.

// LogitsStageOn runs the logits stage on logits as the session's current
// ones (a benchmark's replay of a run's steps).
func (s *Session) LogitsStageOn(logits []float32) *LogitsInfo {
	s.logits = append(s.logits[:0], logits...)
	s.dist = nil
	return s.logitsStage(false)
}

// SerialTasks has the session's independent tasks run one after the
// other on the caller's goroutine (on) or on the engine's pool (off).
func SerialTasks(on bool) {
	if on {
		concurrently = func(tasks ...func()) {
			for _, t := range tasks {
				t()
			}
		}
	} else {
		concurrently = engineConcurrently
	}
}
