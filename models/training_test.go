package models

// training_test.go: the default model's training summary, as the lessons quote it.

import "testing"

func TestHardwareWords(t *testing.T) {
	for _, tc := range []struct{ device, want string }{
		{"", "2 CPU cores"},
		{"CPU (1 torch threads)", "2 CPU cores"},
		{"NVIDIA H200", "one NVIDIA H200 GPU"},
	} {
		if got := hardware(tc.device); got != tc.want {
			t.Errorf("hardware(%q) = %q, want %q", tc.device, got, tc.want)
		}
	}
}

// TestDefaultTrainingSummary: the targets hold for the shipped model
// (validation loss ≤ 3.80 on the held-out prose, capitals known) and the
// summary says where it trained.
func TestDefaultTrainingSummary(t *testing.T) {
	tr, err := Training()
	if err != nil {
		t.Fatal(err)
	}
	if tr.ValLoss <= 0 || tr.ValLoss > 3.80 {
		t.Errorf("validation loss %.4f, want ≤ 3.80", tr.ValLoss)
	}
	if tr.Tokens <= 0 || tr.Minutes <= 0 {
		t.Errorf("tokens %d, minutes %.2f: want both positive", tr.Tokens, tr.Minutes)
	}
	if tr.Hardware == "" || tr.CapitalsTotal < 200 || tr.CapitalsRight*10 < tr.CapitalsTotal*9 {
		t.Errorf("summary %+v: want hardware named and ≥ 90%% of ≥ 200 capitals", tr)
	}
}
