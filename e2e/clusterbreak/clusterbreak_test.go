// SPDX-License-Identifier: Apache-2.0

package clusterbreak

import (
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 28, 6, 41, 37, 0, time.UTC)

func at(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

func TestTheWording(t *testing.T) {
	for _, c := range []struct {
		b    Break
		want string
	}{
		{Break{What: "node s135-worker", State: "NotReady", From: at(0)}, "node s135-worker NotReady from 06:41:37"},
		{Break{What: "node s135-worker", State: "NotReady", From: at(0), To: at(85)}, "node s135-worker NotReady from 06:41:37 until 06:43:02"},
		{Break{What: "node w", State: "NotReady", From: at(0), To: at(40), Ended: "node deleted"}, "node w NotReady from 06:41:37 until 06:42:17 (node deleted)"},
		{Break{What: "kube-scheduler on cp", State: "not ready", From: at(30), AfterSuiteMove: true, Move: "s135: gate move of kube-scheduler", GraceSeconds: 60},
			`kube-scheduler on cp not ready from 06:42:07, not back 60 s after the suite's move "s135: gate move of kube-scheduler"`},
		{Break{What: "node w", State: "NotReady", From: at(0).In(time.FixedZone("X", 3600))}, "node w NotReady from 06:41:37"},
	} {
		if got := c.b.String(); got != c.want {
			t.Errorf("got %q\nwant %q", got, c.want)
		}
	}
}

func TestByItselfAndText(t *testing.T) {
	node := Break{What: "node w", State: "NotReady", From: at(0)}
	sched := Break{What: "kube-scheduler on cp", State: "not ready", From: at(0), AfterSuiteMove: true, Move: "m", GraceSeconds: 60}
	cp := Break{What: "etcd on cp", State: "not ready", From: at(0), To: at(1)}
	self, moved := ByItself([]Break{node, sched, cp})
	if len(self) != 2 || self[0] != node || self[1] != cp || len(moved) != 1 || moved[0] != sched {
		t.Fatalf("self %v, after moves %v", self, moved)
	}
	if got, want := Text(self), "node w NotReady from 06:41:37; etcd on cp not ready from 06:41:37 until 06:41:38"; got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if got := Text(nil); got != "" {
		t.Errorf("no breaks: %q", got)
	}
}

func TestBreakDuring(t *testing.T) {
	b := Break{What: "node w", State: "NotReady", From: at(100), To: at(200)}
	for _, c := range []struct {
		start, end int
		want       bool
	}{{0, 99, false}, {0, 100, true}, {150, 160, true}, {200, 300, true}, {201, 300, false}} {
		if got := b.During(at(c.start), at(c.end)); got != c.want {
			t.Errorf("break 100-200, spec %d-%d: want %t, got %t", c.start, c.end, c.want, got)
		}
	}
	b.To = time.Time{}
	if !b.Open() || !b.During(at(500), at(600)) {
		t.Error("an open break: a spec after its start overlaps it")
	}
}
