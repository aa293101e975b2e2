// SPDX-License-Identifier: Apache-2.0

package kindcluster

// The restarter's first implementation, fastRestart: which components
// restart in which order, and the waits, for a change of static pod
// manifests (the steps themselves are in staticpods.go); what it needs of the
// node; and a kubelet restart, which both implementations share.

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/kep5018/adminaccess-conformance/clusters/profile"
)

// fastRestart is the restarter taken where it fits: it replaces a
// control-plane component's manifest so that the kubelet starts the new pod
// at once, where an edit in place makes it wait for the old pod's whole
// clean-up and a back-off, and kube-apiserver for its whole grace period. So
// the manifest is taken out, the old process ended once it no longer serves
// (what the kubelet does at the end of the grace period anyway), the old
// pod's cgroup waited for, and the new manifest put in, stamped so that it is
// a new pod; where the kubelet had not quite finished the old pod, it is
// stamped again (see awaitBegun). The figures behind each step are in
// docs/benchmarks.md, "What a restart's steps save". Its preconditions are
// the kubelet's behaviour with a manifest taken out and put back and with
// manifests put in while it is stopped (docs/restart.md); where the kubelet
// does not begin a new pod as they expect, it returns an *unfitError and the
// caller (restarters) falls back on plainRestart.
type fastRestart struct{ *Cluster }

// fastTools are the commands the fast restart needs on the control-plane
// node beyond what any restart needs (sh, curl, pgrep): ctr to see whether
// the kubelet has begun a new pod (awaitBegun), iptables for the hold on
// kube-apiserver's clients (hold.go), pkill to end an old process that no
// longer serves, systemctl for the kubelet restarts that start
// kube-apiserver (restartWithAPIServer).
var fastTools = []string{"ctr", "iptables", "pkill", "systemctl"}

// missingToolsScript prints each command it is given that the node does
// not have.
const missingToolsScript = `for t; do command -v "$t" >/dev/null 2>&1 || echo "$t"; done; true`

// unfit is the check made before the cluster's first restart: the tools
// the sequence runs. Whether the kubelet acts as the sequence expects is seen
// on the way (awaitBegun, after each manifest put in and each kubelet
// restart), as no version or setting of the kubelet says it.
func (c fastRestart) unfit(cp nodes.Node) string {
	out, err := run(cp, missingToolsScript, fastTools...)
	if err != nil || out == "" {
		// A node that does not answer is no verdict on its tools (and the
		// cluster would stay with the plain way): the restart says what
		// is wrong.
		return ""
	}
	return fmt.Sprintf("%s lacks %s", cp, strings.Join(strings.Fields(out), ", "))
}

func (c fastRestart) restart(ctx context.Context, ch change) error {
	ws := waves(ch)
	if len(ws) == 0 {
		return nil
	}
	if ch.target == nil {
		// No mirror pods are deleted: kube-apiserver may be among the
		// components stopped, and nothing waits for the new ones.
		err := c.replaceStaticPods(ctx, ch.node, ws[0], nil)
		// Nothing waits for a kube-apiserver that may refuse to start, so
		// nothing would lift the hold on its clients.
		liftHold(ch.node)
		return err
	}
	wait := func(comp profile.Component, oldHash string, manifest []byte) error {
		t, err := ch.target(comp, manifest)
		if err == nil {
			err = c.waitComponent(ctx, ch.node, componentWait{comp: comp, oldHash: oldHash, target: t})
		}
		if ch.served != nil {
			ch.served(comp, err)
		}
		return err
	}
	if len(ws) == 2 {
		return c.restartWithAPIServer(ctx, ch.node, ws[0], ws[1], wait)
	}
	return c.restartStaticPods(ctx, ch.node, ws[0], wait)
}

func (c fastRestart) restartKubelet(ctx context.Context, n nodes.Node, prepare string, args ...string) error {
	return restartKubeletProcess(ctx, n, prepare, args...)
}

// pollInterval is how often a restart step looks again: each look is one
// `docker exec`, about 0.1 s.
const pollInterval = 250 * time.Millisecond

// waitFunc waits until comp, restarted from manifest (as given, before
// replaceStaticPods stamps it), serves; oldHash is its mirror pod's config
// hash before the restart.
type waitFunc func(comp profile.Component, oldHash string, manifest []byte) error

// restartStaticPods replaces the components' manifests together and then
// waits for each, in profile.ControlPlane order.
func (c fastRestart) restartStaticPods(ctx context.Context, cp nodes.Node, manifests map[profile.Component][]byte, wait waitFunc) error {
	before := c.readMirrorPods(ctx, cp, manifests)
	if err := c.replaceStaticPods(ctx, cp, manifests, before); err != nil {
		return err
	}
	return waitAll(manifests, before, wait)
}

// waitAll waits for each component of manifests, in profile.ControlPlane
// order.
func waitAll(manifests map[profile.Component][]byte, before mirrorPods, wait waitFunc) error {
	for _, comp := range profile.ControlPlane {
		if m, ok := manifests[comp]; ok {
			if err := wait(comp, before.hash(comp), m); err != nil {
				return err
			}
		}
	}
	return nil
}

// restartWithAPIServer restarts kube-apiserver and, after it,
// kube-controller-manager and kube-scheduler: each from its new manifest or,
// where the change has none, from its manifest as it stands (waves).
//
// Why after it: each of these clients would run through kube-apiserver's
// restart and lose its watches, and client-go retries them with a back-off
// that doubles up to 30 s (with jitter, 60 s) and is forgotten only after two
// minutes without a failure, so a spec's bounded wait would measure a
// client's back-off (what was seen: docs/benchmarks.md). Started once
// kube-apiserver serves and authorizes, they have no failure to back off
// from. So all three stop together (the two can do nothing while
// kube-apiserver is away), kube-apiserver starts, and once it serves the
// two start (a kubelet restart leaves running containers alone, and a new
// kubelet has no back-off either): a move pays one stop, not two.
//
// For a release switch this is also the version skew policy's order both
// ways: no kube-controller-manager or kube-scheduler ever runs against an
// older kube-apiserver. If kube-apiserver does not come back, the two are
// started all the same, on the manifests they were given.
//
// first is kube-apiserver's manifest, then the other two's (waves). Where
// the kubelet does not begin a pod whose manifest went in while it was
// stopped (awaitBegun), the fast way's precondition does not hold and the
// error says so: the caller then writes every manifest in place, the two
// that had started before included.
func (c fastRestart) restartWithAPIServer(ctx context.Context, cp nodes.Node, first, then map[profile.Component][]byte, wait waitFunc) error {
	all := maps.Clone(then)
	maps.Copy(all, first)
	start := time.Now()
	before := c.readMirrorPods(ctx, cp, all)
	next, err := c.stopStaticPods(ctx, cp, all)
	if err != nil {
		return err
	}
	c.logf("control plane stopped after %s", elapsed(start))
	apiserver, others := podsIn(next, first), podsIn(next, then)
	rest := components(others)
	// Each start is a kubelet restart with the manifests put in while it is
	// stopped. A new kubelet never knew the old pods, so it starts the new
	// ones at once: the kubelet that ran them starts a static pod whose
	// predecessor of the same name it has not finished yet only after a
	// 10-15 s back-off, which waiting for the old pod's cgroup to go did not
	// always avoid with three pods stopped at once. The second restart also
	// gives the kubelet watches that started after kube-apiserver served.
	err = c.startWithKubeletRestart(ctx, cp, components(apiserver))
	if err == nil {
		c.logf("kubelet restarted with kube-apiserver's manifest after %s", elapsed(start))
		err = c.awaitBegun(ctx, cp, apiserver, start)
	}
	if err != nil {
		liftHold(cp)
		startStaticPods(cp, rest)
		return err
	}
	if err := wait(profile.APIServer, before.hash(profile.APIServer), first[profile.APIServer]); err != nil {
		startStaticPods(cp, rest)
		return err
	}
	// The old mirror pods go before the kubelet starts: it then publishes
	// the new ones at its first sync. Left to it, it replaced them only at
	// a later sync, up to 10 s after the component served.
	c.deleteMirrorPods(ctx, before, rest)
	if err := c.startWithKubeletRestart(ctx, cp, rest); err != nil {
		startStaticPods(cp, rest)
		return err
	}
	c.logf("kubelet restarted with the manifests of %v after %s", rest, elapsed(start))
	if err := c.awaitBegun(ctx, cp, others, start); err != nil {
		return err
	}
	return waitAll(then, before, wait)
}

// podsIn is those of pods whose component manifests names.
func podsIn(pods []nextPod, manifests map[profile.Component][]byte) []nextPod {
	var in []nextPod
	for _, p := range pods {
		if _, ok := manifests[p.comp]; ok {
			in = append(in, p)
		}
	}
	return in
}

// startWithKubeletRestart restarts the control-plane node's kubelet with
// comps' staged manifests moved into its folder while it is stopped.
func (c fastRestart) startWithKubeletRestart(ctx context.Context, cp nodes.Node, comps []profile.Component) error {
	script, args := startScript(comps)
	return restartKubeletProcess(ctx, cp, "systemctl stop kubelet && { "+script+"; }", args...)
}

// restartKubeletProcess restarts the kubelet on n (running `before` first, when
// given, in the same shell, with args) and waits until a new kubelet process
// answers on its healthz port: a node's Ready condition alone would still
// show the old kubelet's last report.
func restartKubeletProcess(ctx context.Context, n nodes.Node, before string, args ...string) error {
	old, _ := run(n, "systemctl show -p MainPID --value kubelet")
	script := "systemctl restart kubelet"
	if before != "" {
		script = before + " && " + script
	}
	if out, err := run(n, script, args...); err != nil {
		return fmt.Errorf("restarting the kubelet on %s: %w: %s", n, err, out)
	}
	var seen string
	err := wait.PollUntilContextTimeout(ctx, pollInterval, SwitchTimeout, true, func(ctx context.Context) (bool, error) {
		pid, _ := run(n, "systemctl show -p MainPID --value kubelet")
		health, _ := run(n, "curl -s --max-time 2 http://127.0.0.1:10248/healthz")
		seen = fmt.Sprintf("pid %s (was %s), healthz %q", pid, old, health)
		return pid != "" && pid != "0" && pid != old && health == "ok", nil
	})
	if err != nil {
		return fmt.Errorf("the kubelet on %s did not come back %s (last seen: %s); its last log lines:\n%s", n, inTime(ctx, SwitchTimeout), seen, kubeletJournal(n))
	}
	return nil
}
