// Package session is the step-through run the lab drives: a shared
// read-only engine.Model plus one student's KV cache, sampling stream and
// history, advanced one stage at a time.
//
// One idea per file: events.go (what each stage reports), config.go
// (settings and limits), session.go (the state machine and its commands),
// stages.go (the stage builders), sample.go (the sampling rules),
// wording.go (the sentences the UI shows).
package session
