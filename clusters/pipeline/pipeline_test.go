// SPDX-License-Identifier: Apache-2.0

package pipeline

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

// Steps run in order on the one state, each hook around each; the first
// error stops the pipeline and comes back wrapped in its step's name.
func TestRunStopsAtTheFirstErrorWrappedInItsName(t *testing.T) {
	var seen []string
	add := func(name string, err error) Step[*[]string] {
		return Step[*[]string]{name, func(s *[]string) error { *s = append(*s, "run "+name); return err }}
	}
	broke := errors.New("broke")
	err := Run(&seen, []Step[*[]string]{add("a", nil), add("b", broke), add("c", nil)}, Hooks{
		Before: func(name string) { seen = append(seen, "before "+name) },
		Done:   func(name string, took time.Duration) { seen = append(seen, "done "+name) },
	})
	if err == nil || err.Error() != "b: broke" || !errors.Is(err, broke) {
		t.Errorf("error %v, want b: broke wrapping it", err)
	}
	if want := []string{"before a", "run a", "done a", "before b", "run b"}; !slices.Equal(seen, want) {
		t.Errorf("ran %q, want %q", seen, want)
	}
}

// A context given is checked between steps: once done, the next step does
// not start and the error names it; without one, every step runs.
func TestRunChecksTheContextBetweenSteps(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var ran []string
	steps := []Step[int]{
		{"first", func(int) error { ran = append(ran, "first"); cancel(); return nil }},
		{"second", func(int) error { ran = append(ran, "second"); return nil }},
	}
	err := Run(0, steps, Hooks{Ctx: ctx})
	if err == nil || err.Error() != "second: not started: interrupted" || !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want second: not started: interrupted", err)
	}
	if !slices.Equal(ran, []string{"first"}) {
		t.Errorf("ran %q after the context ended", ran)
	}
	ran = nil
	if err := Run(0, steps, Hooks{}); err != nil || len(ran) != 2 {
		t.Errorf("without a context: ran %q, error %v", ran, err)
	}
	late, stop := context.WithTimeout(context.Background(), time.Nanosecond)
	defer stop()
	<-late.Done()
	if err := Run(0, steps, Hooks{Ctx: late}); err == nil || err.Error() != "first: not started: context deadline exceeded" {
		t.Errorf("a deadline: error %v", err)
	}
}
