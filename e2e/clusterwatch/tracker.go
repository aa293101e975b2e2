// SPDX-License-Identifier: Apache-2.0

// Package clusterwatch tells a cluster that broke under a run from what the
// run itself moved. A watcher (watch.go) reports what the suite relies on
// (each node's Ready condition, the control plane's static pods, the
// driver's kubelet-plugin pods, kube-apiserver answering the watcher's own
// client) as targets, healthy or not; the suite's own moves (gate moves,
// feature-set moves, release switches: every live change kindcluster
// makes) open windows in which nothing that goes down is a break. What
// stays broken beyond a grace outside every window is a Break, with what
// broke and from when. The files in record.go carry the windows from the
// process that moves to the watcher and the breaks from the watcher to
// every Ginkgo process. No Ginkgo here: the classification is unit-tested.
package clusterwatch

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kep5018/adminaccess-conformance/e2e/clusterbreak"
)

// Grace is how long something the suite relies on may stay broken, outside
// the suite's own moves, before it is a break: longer than a driver pod the
// DaemonSet replaces or a static pod the kubelet restarts (seconds), and
// than a node's Ready flapping while its kubelet restarts; short enough
// that the specs after it fail at once instead of waiting out their own
// timeouts (one to two minutes each). The one place it is set.
const Grace = 25 * time.Second

// ControlPlaneGrace is Grace for the control plane's static pods (cp/
// targets): after the suite's own fast restart the kubelet deletes and
// republishes a component's mirror pod, which turns Ready only after its
// startupProbe (initialDelaySeconds 10, periodSeconds 10), 12-22 s after
// the move's window ends; on a loaded 2-core machine that is too near 25 s
// for a restart the suite made to stay the suite's.
const ControlPlaneGrace = 60 * time.Second

// MoveTimeout is how long one of the suite's moves may stay open without
// its end: a mover that died (or a spec that failed before ending its move)
// leaves a window that would otherwise excuse everything for the rest of
// the run. Past it the window ends where it timed out, and the watcher
// says so.
const MoveTimeout = 10 * time.Minute

// Break is something the suite relies on that stayed broken beyond the
// grace, outside the suite's own moves (e2e/clusterbreak: report.json
// keeps it, and the pages say it, as is).
type Break = clusterbreak.Break

// target is one thing watched.
type target struct {
	what string
	// known: seen healthy once. A target broken from the first look was
	// so before the run (an existing cluster's dead node): not the run's
	// break, until it has been whole.
	known bool
	bad   bool
	since time.Time
	state string
	// open is the index in Tracker.breaks of its open break, or -1.
	open int
}

// window is one of the suite's own moves.
type window struct {
	what       string
	start, end time.Time
	// timedOut: open longer than MoveTimeout; end is where it timed out.
	timedOut bool
}

// Tracker classifies what the watcher sees against the suite's moves. Its
// methods take the time of what they report, so tests give it any clock.
type Tracker struct {
	grace time.Duration
	// cpGrace is the grace of the control plane's static pods (cp/ keys).
	cpGrace time.Duration
	mu      sync.Mutex
	targets map[string]*target
	windows map[string]*window
	breaks  []Break
}

// NewTracker is a tracker with those graces (Grace and ControlPlaneGrace
// unless a test says).
func NewTracker(grace, controlPlaneGrace time.Duration) *Tracker {
	return &Tracker{grace: grace, cpGrace: controlPlaneGrace, targets: map[string]*target{}, windows: map[string]*window{}}
}

// graceOf is a target's grace: ControlPlaneGrace's for a control-plane
// pod, Grace's for the rest.
func (t *Tracker) graceOf(key string) time.Duration {
	if strings.HasPrefix(key, "cp/") && t.cpGrace > t.grace {
		return t.cpGrace
	}
	return t.grace
}

// Observe records a target's state at a time: key identifies it, what names
// it, state says how it is broken when it is not healthy.
func (t *Tracker) Observe(key, what string, healthy bool, state string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tg := t.targets[key]
	if tg == nil {
		tg = &target{what: what, open: -1}
		t.targets[key] = tg
	}
	switch {
	case healthy:
		tg.known = true
		if tg.open >= 0 {
			t.breaks[tg.open].To = at
			tg.open = -1
		}
		tg.bad = false
	case !tg.known:
	case !tg.bad:
		tg.bad, tg.since, tg.state = true, at, state
	default:
		tg.state = state
	}
}

// Forget stops watching a target that is gone for a reason of its own (a
// node deleted from the API, and the driver's pod on it): not down
// forever. A break open on it closes at that time, ended by why.
func (t *Tracker) Forget(key, why string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if tg := t.targets[key]; tg != nil && tg.open >= 0 {
		t.breaks[tg.open].To, t.breaks[tg.open].Ended = at, why
	}
	delete(t.targets, key)
}

// Begin opens a window of the suite's own: until End, anything that goes
// down is the suite's doing.
func (t *Tracker) Begin(id, what string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.windows[id] = &window{what: what, start: at}
}

// End closes a window: what is still down from here has the grace, from
// the window's end, to come back.
func (t *Tracker) End(id string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if w := t.windows[id]; w != nil && w.end.IsZero() {
		w.end = at
	}
}

// TimeOut ends, at now, the windows open longer than MoveTimeout, where
// they timed out, and says which (once each): past it a window no longer
// excuses anything.
func (t *Tracker) TimeOut(now time.Time) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for _, w := range t.windows {
		if w.end.IsZero() && now.Sub(w.start) > MoveTimeout {
			w.end, w.timedOut = w.start.Add(MoveTimeout), true
			out = append(out, w.what)
		}
	}
	sort.Strings(out)
	return out
}

// clockStart is when a broken target's grace starts: when it went down, or
// the end of the latest of the suite's windows after that; ok is false
// while a window is open. in is the latest window it went down inside,
// nil where it went down outside them all.
func (t *Tracker) clockStart(since time.Time) (start time.Time, in *window, ok bool) {
	start = since
	for _, w := range t.windows {
		if w.end.IsZero() {
			return time.Time{}, nil, false
		}
		if w.end.After(start) {
			start = w.end
		}
		if !since.Before(w.start) && !since.After(w.end) && (in == nil || w.end.After(in.end)) {
			in = w
		}
	}
	return start, in, true
}

// Check declares, at now, the breaks whose grace has run out, and returns
// them (nil where none is new).
func (t *Tracker) Check(now time.Time) []Break {
	t.mu.Lock()
	defer t.mu.Unlock()
	var keys []string
	for k, tg := range t.targets {
		if tg.bad && tg.open < 0 {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var out []Break
	for _, k := range keys {
		tg := t.targets[k]
		from, in, ok := t.clockStart(tg.since)
		grace := t.graceOf(k)
		if !ok || now.Sub(from) < grace {
			continue
		}
		b := Break{What: tg.what, State: tg.state, From: from}
		if in != nil {
			b.AfterSuiteMove, b.Move, b.GraceSeconds = true, in.what, int(grace.Seconds())
			if in.timedOut {
				b.Move += fmt.Sprintf(" (its end never announced; timed out after %s)", MoveTimeout)
			}
		}
		tg.open = len(t.breaks)
		t.breaks = append(t.breaks, b)
		out = append(out, b)
	}
	return out
}

// Breaks are every break declared so far, in the order declared, open or
// closed.
func (t *Tracker) Breaks() []Break {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Break(nil), t.breaks...)
}

// OpenBreaks are the breaks still open.
func OpenBreaks(all []Break) []Break {
	var out []Break
	for _, b := range all {
		if b.Open() {
			out = append(out, b)
		}
	}
	return out
}
