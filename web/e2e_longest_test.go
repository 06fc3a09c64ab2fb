package web_test

// e2e_longest_test.go: the longest browser tests (the decoder families, the
// lesson walk, the lessons' wide layout) side by side in go test's serial
// phase. Each is a parallel subtest whose own parallel subtests (a family,
// a lesson) run -parallel at a time beside the others'. Run one at a time
// they left a core idle for half of the ~40 s they took together (each
// waits on paced sockets and on its slowest tab); as top-level parallel
// tests, their subtests queued behind every parallel test already waiting
// and the package's run ended on them.

import "testing"

func TestBrowserLongest(t *testing.T) {
	for _, c := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"Families", browserFamilies},
		{"LessonFramework", browserLessonFramework},
		{"LessonsV2Layout", browserLessonsV2Layout},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t)
		})
	}
}
