package ws

// export_test.go: seams for the package's external tests.

// SetAfterStages sets testAfterStages and returns what restores it.
func SetAfterStages(f func(c *Conn, id int64)) (restore func()) {
	old := testAfterStages.Swap(&f)
	return func() { testAfterStages.Store(old) }
}

// CancelAsReadPumpDoes cancels the stepping command in flight as a cancel
// command arriving then does (readPump: cancel its context, no reply).
func CancelAsReadPumpDoes(c *Conn) {
	c.mu.Lock()
	cancel := c.cancelRun
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}
