// SPDX-License-Identifier: Apache-2.0

package clusterwatch

import (
	"path/filepath"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 28, 6, 41, 37, 0, time.UTC)

func at(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

func TestABreakIsWhatStaysDownBeyondTheGrace(t *testing.T) {
	tr := NewTracker(25*time.Second, 25*time.Second)
	tr.Observe("node/w", "node s135-worker", true, "", at(0))
	tr.Observe("node/w", "node s135-worker", false, "NotReady", at(0))
	if got := tr.Check(at(24)); got != nil {
		t.Fatalf("within the grace: want no break, got %v", got)
	}
	got := tr.Check(at(25))
	if len(got) != 1 || got[0].String() != "node s135-worker NotReady from 06:41:37" {
		t.Fatalf("after the grace: want node s135-worker NotReady from 06:41:37, got %v", got)
	}
	if again := tr.Check(at(60)); again != nil {
		t.Fatalf("a break is declared once, got %v again", again)
	}
	tr.Observe("node/w", "node s135-worker", true, "", at(90))
	if all := tr.Breaks(); len(all) != 1 || all[0].Open() || all[0].String() != "node s135-worker NotReady from 06:41:37 until 06:43:07" {
		t.Fatalf("whole again: want the break closed at 06:43:07, got %v", all)
	}
}

func TestWhatComesBackWithinTheGraceIsNoBreak(t *testing.T) {
	tr := NewTracker(25*time.Second, 25*time.Second)
	tr.Observe("driver/w", "the driver's pod on w", true, "", at(0))
	tr.Observe("driver/w", "the driver's pod on w", false, "not ready", at(1))
	tr.Observe("driver/w", "the driver's pod on w", true, "", at(6))
	if got := tr.Check(at(60)); got != nil || len(tr.Breaks()) != 0 {
		t.Fatalf("a driver pod replaced in 5 s: want no break, got %v", tr.Breaks())
	}
}

func TestTheSuitesOwnMovesAreNoBreak(t *testing.T) {
	tr := NewTracker(25*time.Second, 25*time.Second)
	tr.Observe("cp/s", "kube-scheduler on cp", true, "", at(0))
	tr.Begin("1", "restart of kube-scheduler", at(10))
	tr.Observe("cp/s", "kube-scheduler on cp", false, "not running (its mirror pod is gone)", at(11))
	if got := tr.Check(at(100)); got != nil {
		t.Fatalf("down inside an open move (90 s): want no break, got %v", got)
	}
	tr.End("1", at(100))
	if got := tr.Check(at(124)); got != nil {
		t.Fatalf("the grace runs from the move's end: want no break at +24 s, got %v", got)
	}
	got := tr.Check(at(125))
	if len(got) != 1 || !got[0].From.Equal(at(100)) {
		t.Fatalf("still down 25 s after the move ended: want a break from the move's end (06:43:17), got %v", got)
	}
	// A component the move restarted, back in time, was the suite's.
	tr2 := NewTracker(25*time.Second, 25*time.Second)
	tr2.Observe("cp/s", "kube-scheduler on cp", true, "", at(0))
	tr2.Begin("1", "restart", at(10))
	tr2.Observe("cp/s", "kube-scheduler on cp", false, "not ready", at(11))
	tr2.End("1", at(40))
	tr2.Observe("cp/s", "kube-scheduler on cp", true, "", at(45))
	if got := tr2.Check(at(200)); got != nil {
		t.Fatalf("restarted by the suite and back 5 s after the move: want no break, got %v", got)
	}
}

func TestAMoveThatEndedBeforeTheBreakDoesNotExcuseIt(t *testing.T) {
	tr := NewTracker(25*time.Second, 25*time.Second)
	tr.Observe("node/w", "node w", true, "", at(0))
	tr.Begin("1", "restart of kubelet on w", at(1))
	tr.End("1", at(5))
	tr.Observe("node/w", "node w", false, "NotReady", at(50))
	if got := tr.Check(at(75)); len(got) != 1 || !got[0].From.Equal(at(50)) {
		t.Fatalf("a node down 45 s after the suite's move: want a break from its own time, got %v", got)
	}
}

func TestBrokenFromTheFirstLookIsNotTheRunsBreak(t *testing.T) {
	tr := NewTracker(25*time.Second, 25*time.Second)
	tr.Observe("node/dead", "node dead", false, "NotReady", at(0))
	if got := tr.Check(at(100)); got != nil {
		t.Fatalf("a node NotReady before the run began: want no break, got %v", got)
	}
	tr.Observe("node/dead", "node dead", true, "", at(110))
	tr.Observe("node/dead", "node dead", false, "NotReady", at(120))
	if got := tr.Check(at(145)); len(got) != 1 {
		t.Fatalf("once whole, then down again beyond the grace: want a break, got %v", got)
	}
}

func TestTheSharedFilesCarryMovesAndBreaks(t *testing.T) {
	dir := t.TempDir()
	moves := filepath.Join(dir, MovesFile)
	end, err := BeginMove(moves, "s135: restart of kube-scheduler")
	if err != nil {
		t.Fatal(err)
	}
	tr := NewTracker(25*time.Second, 25*time.Second)
	r := MoveReader{Path: moves}
	if err := r.ApplyTo(tr); err != nil {
		t.Fatal(err)
	}
	tr.Observe("cp/s", "kube-scheduler on cp", true, "", time.Now())
	tr.Observe("cp/s", "kube-scheduler on cp", false, "not ready", time.Now())
	if got := tr.Check(time.Now().Add(time.Hour)); got != nil {
		t.Fatalf("the move another process began is open: want no break, got %v", got)
	}
	end()
	if err := r.ApplyTo(tr); err != nil {
		t.Fatal(err)
	}
	if got := tr.Check(time.Now().Add(time.Hour)); len(got) != 1 {
		t.Fatalf("the move ended, the component still down an hour on: want a break, got %v", got)
	}
	path := filepath.Join(dir, BreaksFile)
	if err := WriteBreaks(path, tr.Breaks()); err != nil {
		t.Fatal(err)
	}
	read, err := ReadBreaks(path)
	if err != nil || len(read) != 1 || read[0].What != "kube-scheduler on cp" {
		t.Fatalf("breaks file: want the one break back, got %v, %v", read, err)
	}
	// Down inside the move and never back: the suite's move failing.
	if s := Say(read); !read[0].AfterSuiteMove || s != "not back after the suite's own move: "+read[0].String() {
		t.Fatalf("Say: got %q", s)
	}
	if none, err := ReadBreaks(filepath.Join(dir, "absent")); none != nil || err != nil {
		t.Fatalf("no file is no break: got %v, %v", none, err)
	}
}

// The audit's finding: after the suite's fast restart a control-plane
// mirror pod turns Ready 12-22 s after the move ends (its startupProbe);
// the control plane has ControlPlaneGrace, the rest Grace.
func TestTheControlPlaneHasTheLongerGrace(t *testing.T) {
	tr := NewTracker(Grace, ControlPlaneGrace)
	tr.Observe("cp/s", "kube-scheduler on cp", true, "", at(0))
	tr.Observe("node/w", "node w", true, "", at(0))
	tr.Observe("cp/s", "kube-scheduler on cp", false, "not ready", at(10))
	tr.Observe("node/w", "node w", false, "NotReady", at(10))
	got := tr.Check(at(10 + 40))
	if len(got) != 1 || got[0].What != "node w" {
		t.Fatalf("40 s down: want the node's break alone, got %v", got)
	}
	if got := tr.Check(at(10 + 60)); len(got) != 1 || got[0].What != "kube-scheduler on cp" {
		t.Fatalf("60 s down: want kube-scheduler's break, got %v", got)
	}
}

// Down inside one of the suite's moves and not back is the move failing:
// named so, with the move, and not excusable as the cluster's own break.
func TestDownInsideAMoveAndNotBackIsTheMovesFailure(t *testing.T) {
	tr := NewTracker(25*time.Second, 60*time.Second)
	tr.Observe("cp/s", "kube-scheduler on cp", true, "", at(0))
	tr.Observe("node/w", "node w", true, "", at(0))
	tr.Begin("1", "s135: gate move of kube-scheduler", at(10))
	tr.Observe("cp/s", "kube-scheduler on cp", false, "not ready", at(11))
	tr.End("1", at(30))
	tr.Observe("node/w", "node w", false, "NotReady", at(40))
	got := tr.Check(at(200))
	if len(got) != 2 {
		t.Fatalf("want two breaks, got %v", got)
	}
	for _, b := range got {
		switch b.What {
		case "kube-scheduler on cp":
			if !b.AfterSuiteMove || b.Move != "s135: gate move of kube-scheduler" ||
				b.String() != `kube-scheduler on cp not ready from 06:42:07, not back 60 s after the suite's move "s135: gate move of kube-scheduler"` {
				t.Errorf("down inside the move: %+v (%s)", b, b)
			}
		case "node w":
			if b.AfterSuiteMove {
				t.Errorf("down after the move ended is the cluster's own: %+v", b)
			}
		}
	}
}

// A move whose end is never announced excuses nothing after MoveTimeout.
func TestAMoveNeverEndedTimesOut(t *testing.T) {
	tr := NewTracker(25*time.Second, 25*time.Second)
	tr.Observe("driver/w", "the driver's pod on w", true, "", at(0))
	tr.Begin("1", "the driver's pod on w deleted by a spec", at(0))
	tr.Observe("driver/w", "the driver's pod on w", false, "not ready", at(1))
	if got := tr.Check(at(500)); got != nil {
		t.Fatalf("inside the open move: want no break, got %v", got)
	}
	late := at(0).Add(MoveTimeout + time.Second)
	if said := tr.TimeOut(late); len(said) != 1 {
		t.Fatalf("the move open past MoveTimeout: want it said, got %v", said)
	}
	if said := tr.TimeOut(late.Add(time.Minute)); said != nil {
		t.Fatalf("said once: got %v again", said)
	}
	got := tr.Check(late.Add(30 * time.Second))
	if len(got) != 1 || !got[0].AfterSuiteMove {
		t.Fatalf("25 s after the move timed out: want the move's break, got %v", got)
	}
}

// A node deleted from the API is forgotten, not down forever: its open
// break closes as "node deleted".
func TestADeletedNodeIsForgotten(t *testing.T) {
	tr := NewTracker(25*time.Second, 25*time.Second)
	tr.Observe("node/w", "node w", true, "", at(0))
	tr.Observe("node/w", "node w", false, "NotReady", at(0))
	if got := tr.Check(at(30)); len(got) != 1 {
		t.Fatalf("want the node's break, got %v", got)
	}
	tr.Forget("node/w", "node deleted", at(40))
	all := tr.Breaks()
	if len(OpenBreaks(all)) != 0 || all[0].String() != "node w NotReady from 06:41:37 until 06:42:17 (node deleted)" {
		t.Fatalf("deleted: want the break closed as node deleted, got %v", all)
	}
	if got := tr.Check(at(1000)); got != nil {
		t.Fatalf("forgotten: want no new break, got %v", got)
	}
}
