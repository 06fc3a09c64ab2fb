package lessons

// sampling_panels.go: the sampling lesson's interactive panels, drawn by
// static/js/lessonpanels/sampling.js. Each starts from the lab's sampling
// defaults; its sliders re-apply settings to the same logits with the
// resample command.
//
//	sampling-softmax      the top scores, e^(logit − top) and p at T=1
//	sampling-temperature  a temperature slider over the three probabilities
//	sampling-topk         top-k and top-p sliders, the kept set
//	sampling-topp         prompt and compare (a confident and an unsure
//	                      prompt) side by side under one top-p slider
//	sampling-minp         the same pair under min-p and top-p sliders
//	sampling-draw         all five sliders, the cumulative distribution
//	                      with the draw u and the chosen token
//	sampling-greedy       greedy and sampled runs, a token per click
//	                      (tokens: how many at most)
//	sampling-seeds        two seed sliders, a whole text for each (tokens)

func init() {
	PanelKinds = append(PanelKinds, "sampling-softmax", "sampling-temperature", "sampling-topk", "sampling-topp",
		"sampling-minp", "sampling-draw", "sampling-greedy", "sampling-seeds")
}
