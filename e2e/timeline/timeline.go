// SPDX-License-Identifier: Apache-2.0

// Package timeline records where a run's time goes: the steps before the
// suite (the time from make's start to the first release's steps, node
// images, the test driver's image, written by the runner, e2e/run), the
// cluster's set-up, each spec group, each gate move and release switch, and
// the teardown. Report.md shows them so that a slow run explains itself, and
// make bench reads them back.
package timeline

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Entry is the Ginkgo report entry name under which specs and set-up record
// a Step.
const Entry = "timeline"

// Kinds of steps, so that a reader (make bench) can pick them out.
const (
	KindBuild    = "build"    // before the suite: the set-up, images
	KindSetup    = "setup"    // cluster, driver
	KindGroup    = "group"    // a spec group's wall time
	KindMove     = "move"     // a gate move: one component restarted
	KindRelease  = "release"  // a release switch and its steps
	KindSettle   = "settle"   // after a restart: until the cluster's clients have caught up
	KindTeardown = "teardown" // logs, deletion
)

// Step is one timed part of a run.
type Step struct {
	Kind    string    `json:"kind"`
	Name    string    `json:"name"`
	Started time.Time `json:"started,omitempty"`
	Seconds float64   `json:"seconds"`
}

// Since is a Step that started at start and ends now.
func Since(kind, name string, start time.Time) Step {
	return Step{Kind: kind, Name: name, Started: start, Seconds: time.Since(start).Seconds()}
}

func (s Step) String() string {
	return fmt.Sprintf("%s: %s %.1fs", s.Kind, s.Name, s.Seconds)
}

// ReadFile reads the steps the runner wrote before the suite, one per line:
// name, a tab, milliseconds. A missing file is no steps.
func ReadFile(path string) ([]Step, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var steps []Step
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		name, ms, ok := strings.Cut(line, "\t")
		v, err := strconv.ParseInt(strings.TrimSpace(ms), 10, 64)
		if !ok || err != nil || v < 0 {
			return nil, fmt.Errorf("%s:%d: want \"name<TAB>milliseconds\", got %q", path, n, line)
		}
		steps = append(steps, Step{Kind: KindBuild, Name: name, Seconds: float64(v) / 1000})
	}
	return steps, sc.Err()
}

// Sort orders steps by start; steps without a start (before the suite) come
// first, in the order given.
func Sort(steps []Step) {
	sort.SliceStable(steps, func(i, j int) bool {
		a, b := steps[i].Started, steps[j].Started
		if a.IsZero() || b.IsZero() {
			return a.IsZero() && !b.IsZero()
		}
		return a.Before(b)
	})
}
