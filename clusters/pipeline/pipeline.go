// SPDX-License-Identifier: Apache-2.0

// Package pipeline is the one step type: a named step over the state it
// works on, and the one loop that runs steps in order, as kind's create is
// a pipeline of named actions. Kind's create, a release switch, the node
// image's build and the runner's release are each such a pipeline; what
// differs is what they say around a step, which they give as hooks.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Step is one named part of a pipeline: Run works on S, the state the
// steps before it built or the thing they all work on.
type Step[S any] struct {
	Name string
	Run  func(S) error
}

// Hooks are what a pipeline does around its steps; each may be left out.
type Hooks struct {
	// Ctx, where given, is checked before each step: once it is done no
	// further step starts (a step that was running ends as it does with
	// the context it holds itself). Where none is given, a pipeline runs
	// to its end or its first error.
	Ctx context.Context
	// Before is called as a step starts.
	Before func(name string)
	// Done is called after a step that succeeded, with how long it took.
	Done func(name string, took time.Duration)
}

// NotStarted is Run's error where Hooks.Ctx ended before Step started.
type NotStarted struct {
	Step  string
	Cause error // the context's cause
}

func (e NotStarted) Error() string {
	// A Ctrl-C (the context cancelled) is what people see most: it reads
	// as what it is, not as "context canceled".
	if errors.Is(e.Cause, context.Canceled) {
		return e.Step + ": not started: interrupted"
	}
	return e.Step + ": not started: " + e.Cause.Error()
}

func (e NotStarted) Unwrap() error { return e.Cause }

// Run runs steps on s in order and stops at the first that fails, with
// its error wrapped in the step's name ("NAME: error"); callers put what
// the pipeline is in front.
func Run[S any](s S, steps []Step[S], h Hooks) error {
	for _, st := range steps {
		start := time.Now()
		if h.Ctx != nil && h.Ctx.Err() != nil {
			return NotStarted{Step: st.Name, Cause: context.Cause(h.Ctx)}
		}
		if h.Before != nil {
			h.Before(st.Name)
		}
		if err := st.Run(s); err != nil {
			return fmt.Errorf("%s: %w", st.Name, err)
		}
		if h.Done != nil {
			h.Done(st.Name, time.Since(start))
		}
	}
	return nil
}
