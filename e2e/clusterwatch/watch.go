// SPDX-License-Identifier: Apache-2.0

package clusterwatch

import (
	"context"
	"fmt"
	"reflect"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// Config says what to watch and where the shared files are.
type Config struct {
	Client kubernetes.Interface
	// DriverNamespace holds the driver's kubelet-plugin pods ("": none
	// watched, a driver of the user's own found nowhere).
	DriverNamespace string
	// Dir is the artifacts folder the processes share (MovesFile, BreaksFile).
	Dir string
	// Grace is Grace unless a test says; ControlPlaneGrace likewise.
	Grace             time.Duration
	ControlPlaneGrace time.Duration
	// Ready asks kube-apiserver whether it is ready; a GET of /readyz with
	// Client unless a test says.
	Ready func(ctx context.Context) error
	// Logf hears each break as it is declared and each one that closes.
	Logf func(format string, args ...any)
}

// Watcher watches the cluster for the whole run, in one process: one set
// of watches, one writer of the breaks file.
type Watcher struct {
	cfg     Config
	tracker *Tracker
	moves   MoveReader
	cancel  context.CancelFunc
	done    chan struct{}
	written []Break
}

// apiserverKey is kube-apiserver as the watcher's own client reaches it:
// its /readyz, asked each second. (Not the watches' errors and events: a
// reflector backs off up to a minute after an error, and a relist that
// finds nothing changed raises no event, so kube-apiserver the suite
// restarted read as down long after it was back; and a refused connection
// is retried without a word, so a dead one was never named.)
const apiserverKey = "apiserver"

// readyTimeout bounds each /readyz.
const readyTimeout = 2 * time.Second

// Start begins watching; Stop ends it and says what broke.
func Start(ctx context.Context, cfg Config) *Watcher {
	if cfg.Grace == 0 {
		cfg.Grace = Grace
	}
	if cfg.ControlPlaneGrace == 0 {
		cfg.ControlPlaneGrace = ControlPlaneGrace
	}
	if cfg.Ready == nil {
		cfg.Ready = func(ctx context.Context) error {
			return cfg.Client.Discovery().RESTClient().Get().AbsPath("/readyz").Do(ctx).Error()
		}
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &Watcher{cfg: cfg, tracker: NewTracker(cfg.Grace, cfg.ControlPlaneGrace), moves: MoveReader{Path: cfg.Dir + "/" + MovesFile}, cancel: cancel, done: make(chan struct{})}

	nodes := informers.NewSharedInformerFactory(cfg.Client, 0)
	w.handle(nodes.Core().V1().Nodes().Informer(), w.node, w.nodeGone)
	// kubeadm's static pods (kube-apiserver, kube-controller-manager,
	// kube-scheduler, etcd) carry tier=control-plane; a managed cluster
	// shows none, and then only kube-apiserver's answers are watched.
	cp := informers.NewSharedInformerFactoryWithOptions(cfg.Client, 0, informers.WithNamespace(metav1.NamespaceSystem),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = "tier=control-plane" }))
	w.handle(cp.Core().V1().Pods().Informer(), w.controlPlanePod, w.controlPlanePodGone)
	factories := []informers.SharedInformerFactory{nodes, cp}
	if cfg.DriverNamespace != "" {
		// A vendor's namespace may hold more than the kubelet plugin (a
		// controller, a webhook): only a DaemonSet's pods are its plugin.
		drv := informers.NewSharedInformerFactoryWithOptions(cfg.Client, 0, informers.WithNamespace(cfg.DriverNamespace))
		inf := drv.Core().V1().Pods().Informer()
		byNode := func(obj any) {
			if p, ok := podOf(obj); ok && p.Spec.NodeName != "" && daemonSetPod(p) {
				w.driverOn(inf.GetStore(), p.Spec.NodeName)
			}
		}
		w.handle(inf, byNode, byNode)
		factories = append(factories, drv)
	}
	for _, f := range factories {
		f.Start(ctx.Done())
	}
	go w.loop(ctx)
	return w
}

// handle routes an informer's events. Its watch's errors say nothing of
// kube-apiserver (probeAPIServer does), but a watch the run's credentials
// may not make (a suite's Job with fewer rights) is said: that part goes
// unwatched.
func (w *Watcher) handle(inf cache.SharedIndexInformer, seen, gone func(any)) {
	inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    seen,
		UpdateFunc: func(_, obj any) { seen(obj) },
		DeleteFunc: gone,
	})
	inf.SetWatchErrorHandler(func(_ *cache.Reflector, err error) {
		if apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) {
			w.cfg.Logf("cluster watch: not allowed to watch, left unwatched: %v", err)
		}
	})
}

// probeAPIServer records kube-apiserver up or down from its /readyz alone,
// asked with the watcher's client. A refusal of the run's credentials is
// an answer: it serves.
func (w *Watcher) probeAPIServer(ctx context.Context) {
	rctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	err := w.cfg.Ready(rctx)
	if ctx.Err() != nil {
		return // the watch stopped, not kube-apiserver
	}
	if err == nil || apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) {
		w.tracker.Observe(apiserverKey, "kube-apiserver", true, "", time.Now())
		return
	}
	w.tracker.Observe(apiserverKey, "kube-apiserver", false, "not ready to the suite's client (/readyz: "+firstLine(err.Error())+")", time.Now())
}

func (w *Watcher) node(obj any) {
	n, ok := obj.(*corev1.Node)
	if !ok {
		return
	}
	what := "node " + n.Name
	for _, c := range n.Status.Conditions {
		if c.Type != corev1.NodeReady {
			continue
		}
		if c.Status == corev1.ConditionTrue {
			w.tracker.Observe("node/"+n.Name, what, true, "", time.Now())
			return
		}
		state := "NotReady"
		if c.Status == corev1.ConditionUnknown {
			state += " (" + c.Message + ")"
		}
		w.tracker.Observe("node/"+n.Name, what, false, state, since(c.LastTransitionTime))
		return
	}
}

func (w *Watcher) nodeGone(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	// A node deleted from the API is gone, not down forever: its targets
	// are forgotten, and a break open on it ends there.
	if n, ok := obj.(*corev1.Node); ok {
		w.tracker.Forget("node/"+n.Name, "node deleted", time.Now())
		w.tracker.Forget("driver/"+n.Name, "node deleted", time.Now())
	}
}

func (w *Watcher) controlPlanePod(obj any) {
	p, ok := podOf(obj)
	if !ok {
		return
	}
	ready, at := podReady(p)
	w.tracker.Observe("cp/"+p.Name, controlPlaneWhat(p), ready && p.DeletionTimestamp == nil, "not ready", at)
}

func (w *Watcher) controlPlanePodGone(obj any) {
	if p, ok := podOf(obj); ok {
		w.tracker.Observe("cp/"+p.Name, controlPlaneWhat(p), false, "not running (its mirror pod is gone)", time.Now())
	}
}

// driverOn: the driver serves node when one of its DaemonSet's pods there
// is Ready and not being deleted.
func (w *Watcher) driverOn(store cache.Store, node string) {
	for _, obj := range store.List() {
		if p, ok := podOf(obj); ok && p.Spec.NodeName == node && p.DeletionTimestamp == nil && daemonSetPod(p) {
			if ready, _ := podReady(p); ready {
				w.tracker.Observe("driver/"+node, "the driver's pod on "+node, true, "", time.Now())
				return
			}
		}
	}
	w.tracker.Observe("driver/"+node, "the driver's pod on "+node, false, "not ready (none running there)", time.Now())
}

// loop reads the suite's moves and declares breaks once a second: the
// grace runs out between events, so it is a clock, not a poll of the
// cluster (the watches are the cluster's side).
func (w *Watcher) loop(ctx context.Context) {
	defer close(w.done)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			w.probeAPIServer(ctx)
			w.step(time.Now())
		}
	}
}

func (w *Watcher) step(now time.Time) {
	if err := w.moves.ApplyTo(w.tracker); err != nil {
		w.cfg.Logf("cluster watch: reading the suite's moves: %v", err)
	}
	for _, what := range w.tracker.TimeOut(now) {
		w.cfg.Logf("cluster watch: the suite's move %q never announced its end; after %s it no longer excuses anything", what, MoveTimeout)
	}
	for _, b := range w.tracker.Check(now) {
		if b.AfterSuiteMove {
			w.cfg.Logf("cluster watch: BREAK: %s (went down inside the suite's own move and did not come back)", b)
			continue
		}
		w.cfg.Logf("cluster watch: BREAK: %s (seen beyond the grace outside the suite's own moves)", b)
	}
	all := w.tracker.Breaks()
	if reflect.DeepEqual(all, w.written) {
		return
	}
	for i, b := range all {
		if i < len(w.written) && w.written[i].Open() && !b.Open() {
			w.cfg.Logf("cluster watch: whole again: %s", b)
		}
	}
	if err := WriteBreaks(w.cfg.Dir+"/"+BreaksFile, all); err != nil {
		w.cfg.Logf("cluster watch: writing %s: %v", BreaksFile, err)
		return
	}
	w.written = all
}

// Stop ends the watches (before the teardown, which would read as every
// node gone) and returns every break of the run.
func (w *Watcher) Stop() []Break {
	w.cancel()
	<-w.done
	w.step(time.Now())
	return w.tracker.Breaks()
}

// daemonSetPod: a DaemonSet owns p, as it owns a driver's kubelet plugin.
func daemonSetPod(p *corev1.Pod) bool {
	for _, o := range p.OwnerReferences {
		if o.Kind == "DaemonSet" {
			return true
		}
	}
	return false
}

func podOf(obj any) (*corev1.Pod, bool) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	p, ok := obj.(*corev1.Pod)
	return p, ok
}

// podReady is a pod's Ready condition and when it last changed.
func podReady(p *corev1.Pod) (bool, time.Time) {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue, since(c.LastTransitionTime)
		}
	}
	return false, time.Now()
}

func controlPlaneWhat(p *corev1.Pod) string {
	c := p.Labels["component"]
	if c == "" {
		c = p.Name
	}
	return fmt.Sprintf("%s on %s", c, p.Spec.NodeName)
}

func since(t metav1.Time) time.Time {
	if t.IsZero() {
		return time.Now()
	}
	return t.Time
}

func firstLine(s string) string {
	for i, r := range s {
		if r == '\n' {
			return s[:i]
		}
	}
	return s
}
