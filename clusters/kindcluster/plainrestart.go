// SPDX-License-Identifier: Apache-2.0

package kindcluster

// The restarter's second implementation, plainRestart: each new manifest
// written in place in the kubelet's folder, as an administrator edits a
// static pod, and the kubelet waited for. It rests only on what the kubelet
// promises for static pods (it runs what its folder holds and replaces a pod
// whose manifest changed), so it is what the caller (restarters) falls back
// on where the fast restart's preconditions do not hold. It costs what the
// fast one saves: the kubelet ends the old pod with its whole grace period
// (kube-apiserver's 30 s) and starts the new one after its own back-off
// (10-15 s), so a move takes 15-45 s longer (docs/restart.md).

import (
	"context"
	"strings"
	"time"

	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/kep5018/adminaccess-conformance/clusters/profile"
)

type plainRestart struct{ *Cluster }

// unfit: the plain restart needs nothing of the node that any restart does
// not (sh, curl, pgrep).
func (plainRestart) unfit(nodes.Node) string { return "" }

// restartKubelet: a kubelet restart has no faster way; both restarters
// share it.
func (plainRestart) restartKubelet(ctx context.Context, n nodes.Node, prepare string, args ...string) error {
	return restartKubeletProcess(ctx, n, prepare, args...)
}

// restart writes each wave's manifests in place and waits for its
// components before the next wave (waves: kube-apiserver first where it
// moves, for the same reasons as restartWithAPIServer's). After a fast
// attempt that fell back, a component may be stopped with its manifest out
// of the folder or staged beside it: written in place, each is back where
// the kubelet reads it, and its parked copy gone.
func (c plainRestart) restart(ctx context.Context, ch change) error {
	ws := waves(ch)
	if len(ws) == 0 {
		return nil
	}
	// A manifest written over with a new UID is, to the kubelet, the old
	// pod's removal: it must be acted on (sources.go).
	c.awaitKubeletSources(ctx, ch.node)
	if ch.target == nil {
		_, err := writeInPlace(ch.node, ws[0])
		return err
	}
	for i, w := range ws {
		if err := c.restartWave(ctx, ch, w); err != nil {
			// As with the fast restart, where kube-apiserver does not come
			// back the other two start all the same, on the manifests they
			// were given, unwaited: a fast attempt may have left them out of
			// the folder, and they would not run at all.
			for _, later := range ws[i+1:] {
				if _, err := writeInPlace(ch.node, later); err != nil {
					c.logf("after a failed wave: %v", err)
				}
			}
			return err
		}
	}
	return nil
}

// restartWave writes manifests in place and waits for each component, in
// profile.ControlPlane order, until a new process (not the one that ran
// before) shows ch's target and serves, and (but for kube-apiserver) its
// mirror pod is the new pod's (waitComponent).
func (c plainRestart) restartWave(ctx context.Context, ch change, manifests map[profile.Component][]byte) error {
	start := time.Now()
	pids := runningPIDs(ch.node, manifests)
	uids, err := writeInPlace(ch.node, manifests)
	if err != nil {
		return err
	}
	for _, comp := range profile.ControlPlane {
		m, ok := manifests[comp]
		if !ok {
			continue
		}
		t, err := ch.target(comp, m)
		if err == nil {
			err = c.waitComponent(ctx, ch.node, componentWait{comp: comp, uid: uids[comp], oldPID: pids[comp], target: t})
		}
		if ch.served != nil {
			ch.served(comp, err)
		}
		if err != nil {
			return err
		}
		c.logf("%s: written in place, serves after %s", comp, elapsed(start))
	}
	return nil
}

// writeInPlace writes each component's new manifest over the one in the
// kubelet's folder (staged beside it first, so that the kubelet never reads
// half a pod, and moved over it in one command for all) and returns the UID
// each new pod has.
//
// Each gets a UID of its own: the kubelet's config hash is the UID where a
// manifest sets one, and every manifest a restart wrote sets one. Kept, the
// kubelet would take the new manifest for an update of the running pod,
// restart its changed containers in the old sandbox and keep the old mirror
// pod, whose config hash is how a wait, and a reader of the mirror pod, knows
// which manifest runs. A new UID makes it a new pod, as an edit of a
// manifest without one does (the kubelet then derives the UID from the
// manifest's content).
func writeInPlace(cp nodes.Node, manifests map[profile.Component][]byte) (map[profile.Component]string, error) {
	pods, err := stageNewPods(cp, manifests)
	if err != nil {
		return nil, err
	}
	uids := map[profile.Component]string{}
	var comps []profile.Component
	for _, pod := range pods {
		uids[pod.comp] = pod.uid
		comps = append(comps, pod.comp)
	}
	return uids, startStaticPods(cp, comps)
}

// pidsScript prints, for each component named, its name and the PID of its
// oldest process (none where it does not run), one a line.
const pidsScript = `for c; do echo "$c $(pgrep -o -f "^$c ")"; done`

// runningPIDs reads the PID each of manifests' components runs as, in one
// command; one that does not run, or a node that does not answer, has none.
func runningPIDs(cp nodes.Node, manifests map[profile.Component][]byte) map[profile.Component]string {
	var names []string
	for _, comp := range profile.ControlPlane {
		if _, ok := manifests[comp]; ok {
			names = append(names, string(comp))
		}
	}
	out, _ := run(cp, pidsScript, names...)
	return parsePIDs(out)
}

// parsePIDs reads pidsScript's output.
func parsePIDs(out string) map[profile.Component]string {
	pids := map[profile.Component]string{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) == 2 {
			pids[profile.Component(f[0])] = f[1]
		}
	}
	return pids
}
