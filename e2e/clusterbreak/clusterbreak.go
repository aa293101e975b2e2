// SPDX-License-Identifier: Apache-2.0

// Package clusterbreak is a break of the cluster under a run, as the watch
// (e2e/clusterwatch) declares it and report.json keeps it, and the wording
// the pages say it in. A leaf (the standard library only): report stays
// free of client-go, which clusterwatch imports.
package clusterbreak

import (
	"fmt"
	"strings"
	"time"
)

// Break is something the run relied on that stayed broken beyond the
// watch's grace, outside the suite's own moves: what, how, from when, and
// until when it was whole again (zero: still broken).
type Break struct {
	// What is the target, as a person names it: "node s135-worker",
	// "kube-scheduler on s135-control-plane".
	What string `json:"what"`
	// State is what it was seen as: "NotReady", "not running: its mirror
	// pod is gone".
	State string `json:"state"`
	// From is when it was first seen broken outside the suite's moves
	// (a node's: when its Ready condition changed).
	From time.Time `json:"from"`
	// To is when it was seen whole again; zero while it is broken.
	To time.Time `json:"to,omitempty"`
	// Ended says how it ended where not by coming back: "node deleted"
	// (the node left the API, and the watch forgot it).
	Ended string `json:"ended,omitempty"`
	// AfterSuiteMove: it went down inside one of the suite's own moves
	// (Move) and was not back within the grace (GraceSeconds) after the
	// move ended: the suite's move failing, or the release not coming
	// back, not a cluster that broke by itself. Named, but it excuses no
	// spec: those that failed during it stay failed.
	AfterSuiteMove bool   `json:"afterSuiteMove,omitempty"`
	Move           string `json:"suiteMove,omitempty"`
	GraceSeconds   int    `json:"graceSeconds,omitempty"`
}

// Open says whether the break was still open when last seen.
func (b Break) Open() bool { return b.To.IsZero() }

// String is the break as the pages say it: "node s135-worker NotReady from
// 06:41:37" (UTC), with "until 06:43:02" where it ended and "(node
// deleted)" where it ended so; one after a move of the suite's says so:
// "kube-scheduler on cp not ready from 06:41:37, not back 60 s after the
// suite's move \"…\"".
func (b Break) String() string {
	s := fmt.Sprintf("%s %s from %s", b.What, b.State, b.From.UTC().Format(time.TimeOnly))
	if b.AfterSuiteMove {
		s += fmt.Sprintf(", not back %d s after the suite's move %q", b.GraceSeconds, b.Move)
	}
	if !b.Open() {
		s += " until " + b.To.UTC().Format(time.TimeOnly)
	}
	if b.Ended != "" {
		s += " (" + b.Ended + ")"
	}
	return s
}

// During says whether the break was open at any time from start to end.
func (b Break) During(start, end time.Time) bool {
	return !end.Before(b.From) && (b.Open() || !start.After(b.To))
}

// ByItself splits breaks into those the cluster made by itself and those
// after one of the suite's own moves (AfterSuiteMove).
func ByItself(breaks []Break) (self, afterMoves []Break) {
	for _, b := range breaks {
		if b.AfterSuiteMove {
			afterMoves = append(afterMoves, b)
		} else {
			self = append(self, b)
		}
	}
	return self, afterMoves
}

// Text is breaks in one line, "; " between.
func Text(breaks []Break) string {
	parts := make([]string, len(breaks))
	for i, b := range breaks {
		parts[i] = b.String()
	}
	return strings.Join(parts, "; ")
}
