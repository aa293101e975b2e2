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
	"sync"
	"time"
)

// Grace is how long something the suite relies on may stay broken, outside
// the suite's own moves, before it is a break: longer than a driver pod the
// DaemonSet replaces or a static pod the kubelet restarts (seconds), and
// than a node's Ready flapping while its kubelet restarts; short enough
// that the specs after it fail at once instead of waiting out their own
// timeouts (one to two minutes each). The one place it is set.
const Grace = 25 * time.Second

// Break is something the suite relies on that stayed broken beyond the
// grace, outside the suite's own moves.
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
}

// Open says whether the break was still open when last seen.
func (b Break) Open() bool { return b.To.IsZero() }

// String is the break as the report and the sign-off say it: "node
// s135-worker NotReady from 06:41:37", with "until 06:43:02" once whole.
func (b Break) String() string {
	s := fmt.Sprintf("%s %s from %s", b.What, b.State, b.From.UTC().Format(time.TimeOnly))
	if !b.Open() {
		s += " until " + b.To.UTC().Format(time.TimeOnly)
	}
	return s
}

// During says whether the break was open at any time from start to end.
func (b Break) During(start, end time.Time) bool {
	return !end.Before(b.From) && (b.Open() || !start.After(b.To))
}

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
}

// Tracker classifies what the watcher sees against the suite's moves. Its
// methods take the time of what they report, so tests give it any clock.
type Tracker struct {
	grace   time.Duration
	mu      sync.Mutex
	targets map[string]*target
	windows map[string]*window
	breaks  []Break
}

// NewTracker is a tracker with that grace (Grace unless a test says).
func NewTracker(grace time.Duration) *Tracker {
	return &Tracker{grace: grace, targets: map[string]*target{}, windows: map[string]*window{}}
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
// driver pod's node deleted: the node's own target says so).
func (t *Tracker) Forget(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
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

// clockStart is when a broken target's grace starts: when it went down, or
// the end of the latest of the suite's windows after that; ok is false
// while a window is open.
func (t *Tracker) clockStart(since time.Time) (time.Time, bool) {
	start := since
	for _, w := range t.windows {
		if w.end.IsZero() {
			return time.Time{}, false
		}
		if w.end.After(start) {
			start = w.end
		}
	}
	return start, true
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
		from, ok := t.clockStart(tg.since)
		if !ok || now.Sub(from) < t.grace {
			continue
		}
		b := Break{What: tg.what, State: tg.state, From: from}
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
