// SPDX-License-Identifier: Apache-2.0

package clusterwatch

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

func testWatcher(ready func(context.Context) error) *Watcher {
	return &Watcher{cfg: Config{Ready: ready, Grace: time.Second, Logf: func(string, ...any) {}},
		tracker: NewTracker(time.Second, time.Second)}
}

// kube-apiserver is up or down by its /readyz alone: refused is down (and
// named), an answer is up again at once, with no watch event needed.
func TestKubeAPIServerIsItsReadyz(t *testing.T) {
	var err error
	w := testWatcher(func(context.Context) error { return err })
	ctx := context.Background()
	w.probeAPIServer(ctx)
	err = errors.New("dial tcp 127.0.0.1:6443: connect: connection refused")
	w.probeAPIServer(ctx)
	got := w.tracker.Check(time.Now().Add(2 * time.Second))
	if len(got) != 1 || got[0].What != "kube-apiserver" || got[0].State != "not ready to the suite's client (/readyz: dial tcp 127.0.0.1:6443: connect: connection refused)" {
		t.Fatalf("refused: want kube-apiserver's break, named, got %v", got)
	}
	err = nil
	w.probeAPIServer(ctx)
	if open := OpenBreaks(w.tracker.Breaks()); len(open) != 0 {
		t.Fatalf("/readyz answered: want it whole again, got %v", open)
	}
	// A watch stopped is not kube-apiserver down.
	stopped, cancel := context.WithCancel(ctx)
	cancel()
	err = context.Canceled
	w.probeAPIServer(stopped)
	if got := w.tracker.Check(time.Now().Add(time.Hour)); got != nil {
		t.Fatalf("the watch stopped: want no break, got %v", got)
	}
}

func driverPod(name, node string, owner string, ready bool) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "vendor"}, Spec: corev1.PodSpec{NodeName: node}}
	if owner != "" {
		p.OwnerReferences = []metav1.OwnerReference{{Kind: owner, Name: "x"}}
	}
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}
	return p
}

// Only a DaemonSet's pods are the driver's plugin: a vendor's controller
// Ready on the node does not stand for a plugin that is down.
func TestOnlyADaemonSetsPodsAreTheDriver(t *testing.T) {
	w := testWatcher(nil)
	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	store.Add(driverPod("plugin", "w", "DaemonSet", true))
	w.driverOn(store, "w")
	store.Update(driverPod("plugin", "w", "DaemonSet", false))
	store.Add(driverPod("controller", "w", "ReplicaSet", true))
	w.driverOn(store, "w")
	if got := w.tracker.Check(time.Now().Add(time.Hour)); len(got) != 1 || got[0].What != "the driver's pod on w" {
		t.Fatalf("the plugin down, a controller Ready: want the driver's break, got %v", got)
	}
}

// A node deleted from the API is forgotten: its break closes, and the
// driver's target on it goes with it.
func TestANodeDeletedEndsItsBreak(t *testing.T) {
	w := testWatcher(nil)
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "w"}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	w.node(n)
	down := n.DeepCopy()
	down.Status.Conditions[0] = corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionFalse, LastTransitionTime: metav1.Now()}
	w.node(down)
	if got := w.tracker.Check(time.Now().Add(time.Minute)); len(got) != 1 {
		t.Fatalf("want the node's break, got %v", got)
	}
	w.nodeGone(cache.DeletedFinalStateUnknown{Obj: down})
	all := w.tracker.Breaks()
	if len(OpenBreaks(all)) != 0 || all[0].Ended != "node deleted" {
		t.Fatalf("deleted: want the break ended as node deleted, got %+v", all)
	}
	if got := w.tracker.Check(time.Now().Add(time.Hour)); got != nil {
		t.Fatalf("forgotten: want no new break, got %v", got)
	}
}
