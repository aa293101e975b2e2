// SPDX-License-Identifier: Apache-2.0

package kindcluster

// The steps of fastRestart's sequence for static pods: stop the old pods
// (stage, park, end), start the new ones (move in, stamp again where the
// kubelet has not begun them). restart.go orders them into a restart.

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/kep5018/adminaccess-conformance/clusters/nodeconfig"
	"github.com/kep5018/adminaccess-conformance/clusters/profile"
)

// replaceStaticPods gives each component its new manifest and returns once
// the old processes are gone and the new manifests are in the kubelet's
// folder. It does not wait for the new processes (see waitComponent): a
// component that refuses its flags never comes up, and the GA lock spec wants
// exactly that. Several components are replaced together, so that a move
// costs one round of waiting, not one per component.
//
// before, where not nil, holds each component's mirror pod as it was read
// before the restart: those mirror pods are deleted while the components are
// stopped, so that the kubelet publishes the new ones at its
// first sync of the new pods. Left to it, it replaces them only when its own
// watch has seen the old ones, else at a later sync, every 10 s
// (restartWithAPIServer deletes them before its kubelet start for the same
// reason).
func (c fastRestart) replaceStaticPods(ctx context.Context, cp nodes.Node, manifests map[profile.Component][]byte, before mirrorPods) error {
	var names []string
	for comp := range manifests {
		names = append(names, string(comp))
	}
	// Read while the old processes run.
	dirs, _ := run(cp, podCgroupsScript, names...)
	cgroups := strings.Fields(dirs)
	start := time.Now()
	next, err := c.stopStaticPods(ctx, cp, manifests)
	if err != nil {
		return err
	}
	comps := components(next)
	c.logf("%v stopped after %s", comps, elapsed(start))
	c.deleteMirrorPods(ctx, before, comps)
	// The kubelet removes a pod's cgroup as the last step of finishing it,
	// after which a new static pod of the same name starts at once (before
	// that, it waits out a 10-15 s back-off). A component that was not
	// running (one refusing its flags, crash looping) has no cgroup to wait
	// for. A cgroup gone is not always the end of the old pod, though: see
	// startNewPods. Bounded, and no error past it: the kubelet then still
	// starts the new pods. (A kubelet restart, as restartWithAPIServer does,
	// avoids the back-off surely, but every kubelet start deletes the node's
	// ResourceSlices; the suite restarts the kubelet only where a
	// kube-apiserver restart needs it anyway.)
	if len(cgroups) > 0 {
		gone := "gone"
		if wait.PollUntilContextTimeout(ctx, pollInterval, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			left, err := run(cp, `for d; do [ ! -d "$d" ] || echo "$d"; done`, cgroups...)
			return err == nil && left == "", nil
		}) != nil {
			gone = "still there, starting all the same,"
		}
		c.logf("%v: old pod cgroups %s after %s", comps, gone, elapsed(start))
	}
	return c.startNewPods(ctx, cp, next, start)
}

// nextPod is a component's new static pod, as stopStaticPods stages it.
type nextPod struct {
	comp     profile.Component
	uid      string // the new pod's UID, set in its manifest
	manifest []byte // the new manifest as given, before the stamp
}

// stamped is the pod's manifest as written at now.
func (p nextPod) stamped(now time.Time) ([]byte, error) {
	return nodeconfig.StampStaticPod(p.manifest, p.uid, now.UTC().Format(time.RFC3339Nano))
}

func components(pods []nextPod) []profile.Component {
	var comps []profile.Component
	for _, p := range pods {
		comps = append(comps, p.comp)
	}
	return comps
}

// newPodUID gives a restart's new static pod a UID of its own: 32 hex
// digits, the form the kubelet's own (a hash of the manifest) has.
func newPodUID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("a new pod UID: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// stopStaticPods stages each component's new manifest, takes its running
// manifest out of the kubelet's folder and, once the old processes no
// longer serve, ends them (what the kubelet does at the end of the grace
// period anyway). It returns, in profile.ControlPlane order, the components'
// new pods; their manifests wait, staged, for startNewPods or a kubelet
// restart (startWithKubeletRestart). Stopping kube-apiserver holds its clients
// (see hold.go) until waitComponent sees the new one serve. Each step is
// one command on the node for all the components: each command is a
// docker exec, and a command per component and step made a move of three
// seconds longer.
//
// Each new pod gets a UID of its own in its manifest: startNewPods needs it,
// and a kubelet of another release then sees the same pod, where a UID it
// derives changes with its version (see pinEtcdUID).
//
// A manifest is taken away only once the kubelet acts on its removal
// (awaitKubeletSources, sources.go).
func (c fastRestart) stopStaticPods(ctx context.Context, cp nodes.Node, manifests map[profile.Component][]byte) (next []nextPod, err error) {
	// Before the hold: the kubelet authorizes the read of its metrics
	// through kube-apiserver.
	c.awaitKubeletSources(ctx, cp)
	if next, err = stageNewPods(cp, manifests); err != nil {
		return nil, err
	}
	var park, names, urls []string
	for _, pod := range next {
		park = append(park, manifestPath(pod.comp), parkedPath(pod.comp))
		names = append(names, string(pod.comp))
		urls = append(urls, healthURL[pod.comp])
	}
	if _, ok := manifests[profile.APIServer]; ok {
		// Lifted by waitComponent once the new kube-apiserver serves and
		// authorizes (see hold.go), or here if the restart fails.
		if err := holdClients(cp); err != nil {
			// Nothing is stopped yet, and the plain restart holds nothing.
			return nil, &unfitError{why: err.Error()}
		}
		defer func() {
			if err != nil {
				liftHold(cp)
			}
		}()
	}
	if out, err := run(cp, parkScript, park...); err != nil {
		return nil, fmt.Errorf("taking the manifests of %v out of the kubelet's folder on %s: %w: %s", names, cp, err, out)
	}
	var serving string
	stopped := func(ctx context.Context) (bool, error) {
		serving, _ = run(cp, `for u; do curl -sk -o /dev/null --max-time 1 "$u" && echo "$u"; done; true`, urls...)
		return serving == "", nil
	}
	if err := wait.PollUntilContextTimeout(ctx, pollInterval, time.Minute, true, stopped); err != nil {
		return nil, fmt.Errorf("%q still serve a minute after their manifests were taken away: %w", serving, err)
	}
	// No longer serving: the rest of its grace period only drains.
	run(cp, `for c; do pkill -KILL -f "^$c "; done; true`, names...)
	return next, nil
}

// The scripts of a restart, each run once for all the components it
// names. stageScript writes each (path, base64 contents) pair of its
// arguments; parkScript moves each (manifest, parked) pair's manifest, where
// there is one; moveInScript moves each (staged, manifest, parked) triple's
// staged file to the manifest and removes the parked one.
const (
	stageScript  = `while [ $# -gt 1 ]; do printf %s "$2" | base64 -d > "$1" || exit 1; shift 2; done`
	parkScript   = `while [ $# -gt 1 ]; do [ ! -f "$1" ] || mv "$1" "$2" || exit 1; shift 2; done`
	moveInScript = `while [ $# -gt 2 ]; do mv "$1" "$2" && rm -f "$3" || exit 1; shift 3; done`
)

// startNewPods moves the new pods' staged manifests into the kubelet's
// folder and returns once the kubelet has begun each pod (awaitBegun).
func (c fastRestart) startNewPods(ctx context.Context, cp nodes.Node, pods []nextPod, start time.Time) error {
	if err := startStaticPods(cp, components(pods)); err != nil {
		return err
	}
	return c.awaitBegun(ctx, cp, pods, start)
}

// awaitBegun returns once the kubelet has begun each of pods, whose
// manifests it has just been given (made its sandbox), not once its process
// serves (see waitComponent).
//
// The kubelet's housekeeping removes the old pod's cgroup, as it does for a
// pod whose containers are gone, while the old pod's worker may still wait
// for the next relist of the containers (once a second) to finish it. A new
// pod that comes in between is told "Pod cannot start yet" and tried again
// only after the kubelet's 10-15 s back-off (seen at verbosity 4; figures in
// docs/benchmarks.md). Nothing tells the kubelet to try
// again when the old worker ends; an update of the pod does. So a pod that
// has not begun a second after its manifest went in gets its manifest again,
// stamped anew but with the same UID: the same pod, updated, and the kubelet
// looks again at once.
//
// A pod the kubelet has not begun within podStartWindow, though given again
// every second and past the kubelet's own back-off, says that the kubelet
// does not act as the fast restart rests on: that is an *unfitError, and the
// caller writes the manifests in place instead.
func (c fastRestart) awaitBegun(ctx context.Context, cp nodes.Node, pods []nextPod, start time.Time) error {
	if len(pods) == 0 {
		return nil
	}
	written := time.Now()
	var uids []string
	for _, p := range pods {
		uids = append(uids, p.uid)
	}
	waiting := pods
	begun := func(ctx context.Context) (bool, error) {
		out, err := run(cp, notBegunScript, uids...)
		if err != nil {
			return false, nil
		}
		waiting = nil
		for _, p := range pods {
			if strings.Contains(out, p.uid) {
				waiting = append(waiting, p)
			}
		}
		if len(waiting) == 0 || time.Since(written) < podStartRetry {
			return len(waiting) == 0, nil
		}
		// Staged and moved in as the first time (two commands; this is
		// the rare path).
		var staged []string
		for _, p := range waiting {
			stamped, err := p.stamped(time.Now())
			if err != nil {
				return false, err
			}
			staged = append(staged, stagingPath(manifestPath(p.comp)), base64.StdEncoding.EncodeToString(stamped))
		}
		if out, err := run(cp, stageScript, staged...); err != nil {
			return false, fmt.Errorf("staging the manifests of %v again on %s: %w: %s", components(waiting), cp, err, out)
		}
		if err := startStaticPods(cp, components(waiting)); err != nil {
			return false, err
		}
		written = time.Now()
		c.logf("%v: new pods not begun %s into the move, their manifests stamped again", components(waiting), elapsed(start))
		return false, nil
	}
	err := wait.PollUntilContextTimeout(ctx, pollInterval, podStartWindow, true, begun)
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		// The run stopped: no verdict on the kubelet.
		return ctx.Err()
	case !wait.Interrupted(err):
		// A step of the retry failed (staging, moving in): the restart's
		// own error, not the kubelet's behaviour.
		return err
	}
	return &unfitError{why: fmt.Sprintf("the kubelet on %s did not begin the new pods of %v within %s of their manifests going in, given again every %s (%s into the move)",
		cp, components(waiting), podStartWindow, podStartRetry, elapsed(start))}
}

// podStartRetry is how long the kubelet has to begin a new static pod
// before its manifest is stamped again. A pod that may start begins within
// about half a second; the old pod's worker ends within one relist (1 s)
// of its containers' end.
const podStartRetry = time.Second

// podStartWindow bounds awaitBegun's retries: by then the kubelet's own
// back-off (at most 15 s, from the first refusal about a second after the
// manifest went in) has retried the pod as well, so a pod still not begun is
// the kubelet not acting as the fast restart expects.
const podStartWindow = 20 * time.Second

// notBegunScript prints those of the pod UIDs it is given of which the
// node's containerd holds no container yet: the pod's sandbox is the first
// the kubelet makes when it begins a pod. Without ctr it prints nothing,
// and no pod is stamped again.
const notBegunScript = `command -v ctr >/dev/null || exit 0
for u; do
[ -n "$(ctr -n k8s.io containers ls -q "labels.\"io.kubernetes.pod.uid\"==$u" 2>/dev/null)" ] || echo "$u"
done; true`

// startStaticPods moves the components' staged manifests into the kubelet's
// folder, which starts them.
// stageNewPods gives each component of manifests, in the control plane's
// order, a new pod with a UID of its own and stages its stamped manifest
// beside the kubelet's folder; both restarts then put them in their ways.
// Staged first: an interrupted restart can be finished by hand (move the
// staged file into the folder) and never loses a manifest.
func stageNewPods(cp nodes.Node, manifests map[profile.Component][]byte) ([]nextPod, error) {
	now := time.Now()
	var pods []nextPod
	var staged, names []string
	for _, comp := range profile.ControlPlane {
		m, ok := manifests[comp]
		if !ok {
			continue
		}
		uid, err := newPodUID()
		if err != nil {
			return nil, err
		}
		pod := nextPod{comp: comp, uid: uid, manifest: m}
		stamped, err := pod.stamped(now)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", comp, err)
		}
		pods = append(pods, pod)
		staged = append(staged, stagingPath(manifestPath(comp)), base64.StdEncoding.EncodeToString(stamped))
		names = append(names, string(comp))
	}
	if out, err := run(cp, stageScript, staged...); err != nil {
		return nil, fmt.Errorf("staging the manifests of %v on %s: %w: %s", names, cp, err, out)
	}
	return pods, nil
}

func startStaticPods(cp nodes.Node, comps []profile.Component) error {
	if len(comps) == 0 {
		return nil
	}
	script, args := startScript(comps)
	if out, err := run(cp, script, args...); err != nil {
		return fmt.Errorf("putting the new manifests of %v into the kubelet's folder on %s: %w: %s", comps, cp, err, out)
	}
	return nil
}

// startScript is the command, and its arguments, that moves comps' staged
// manifests into the kubelet's folder.
func startScript(comps []profile.Component) (string, []string) {
	var args []string
	for _, comp := range comps {
		args = append(args, stagingPath(manifestPath(comp)), manifestPath(comp), parkedPath(comp))
	}
	return moveInScript, args
}

// podCgroupsScript prints the pod cgroup folder of each named component's
// running process (cgroup v1: under the memory controller; v2: the unified
// tree), one a line; nothing for one that does not run.
const podCgroupsScript = `for c; do
pid=$(pgrep -o -f "^$c ") || continue
p=$(sed -n 's/^[0-9]*:memory://p' /proc/$pid/cgroup); root=/sys/fs/cgroup/memory
if [ -z "$p" ]; then p=$(sed -n 's/^0:://p' /proc/$pid/cgroup); root=/sys/fs/cgroup; fi
[ -n "$p" ] && echo "$root$(dirname "$p")"
done; true`

func parkedPath(comp profile.Component) string { return "/etc/kubernetes/." + string(comp) + ".parked" }
