package session

// wording.go: the English sentences a session puts in its events for the UI
// to show as they are (how position enters, the sampling rule, why the run
// stopped). Errors keep their messages where they are raised.

import "fmt"

// positionMethod says how position information enters the model.
func positionMethod(learned bool) string {
	if learned {
		return "learned position vectors are added to the token vectors (GPT-2)"
	}
	return "no position vector is added: RoPE rotates each head's queries and keys by an angle proportional to the position, inside attention"
}

// samplingRule states the decoding rule p applies.
func samplingRule(p SamplingParams) string {
	if p.Greedy() {
		return "greedy: take the highest-scoring token"
	}
	rule := fmt.Sprintf("sample at temperature %g", p.Temperature)
	if p.TopK > 0 {
		rule += fmt.Sprintf(", top-k %d", p.TopK)
	}
	if p.TopP < 1 {
		rule += fmt.Sprintf(", top-p %g", p.TopP)
	}
	if p.MinP > 0 {
		rule += fmt.Sprintf(", min-p %g", p.MinP)
	}
	return rule + fmt.Sprintf(" (seed %d)", p.Seed)
}

func forcedRule(rule string) string { return "forced by the user: " + rule }

// Stop details, one per reason.
const cancelledDetail = "stopped by the user"

func cancelledBeforeDetail(next Stage) string { return "cancelled before " + string(next) }
func eosDetail(piece string) string {
	return fmt.Sprintf("the model chose its end-of-sequence token %q", piece)
}
func stopStringDetail(stop string) string {
	return fmt.Sprintf("the generated text contains the stop string %q", stop)
}
func maxTokensDetail(n int) string {
	return fmt.Sprintf("it generated the %d new tokens it was allowed (the max new tokens setting)", n)
}
func contextFullDetail(n int) string {
	return fmt.Sprintf("the KV cache is full at %d positions", n)
}
