package kindcluster

// The restarter's implementation, fastRestart: which components restart in
// which order, and the waits, for a change of static pod manifests (the steps
// themselves are in staticpods.go); and a kubelet restart.

import (
	"context"
	"fmt"
	"maps"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/kep5018/adminaccess-conformance/clusters/profile"
)

// fastRestart is the restarter: it replaces a control-plane component's
// manifest so that the kubelet starts the new pod at once, where an edit in
// place makes it wait for the old pod's whole clean-up and a back-off, and
// kube-apiserver for its whole grace period. So the manifest is taken out,
// the old process ended once it no longer serves (what the kubelet does at
// the end of the grace period anyway), the old pod's cgroup waited for, and
// the new manifest put in, stamped so that it is a new pod; where the
// kubelet had not quite finished the old pod, it is stamped again (see
// startNewPods). The figures behind each step are in docs/benchmarks.md,
// "What a restart's steps save".
type fastRestart struct{ *Cluster }

func (c fastRestart) restart(ctx context.Context, ch change) error {
	if len(ch.edited) == 0 {
		return nil
	}
	if ch.target == nil {
		// No mirror pods are deleted: kube-apiserver may be among the
		// components stopped, and nothing waits for the new ones.
		err := c.replaceStaticPods(ctx, ch.node, ch.edited, nil)
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
	return c.restartEdited(ctx, ch.node, ch.current, ch.edited, wait)
}

func (c fastRestart) restartKubelet(ctx context.Context, n nodes.Node, prepare string, args ...string) error {
	return restartKubelet(ctx, n, prepare, args...)
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

// restartEdited restarts the components that edited gives a new manifest
// and waits for them; current holds every component's manifest as it
// stands. Where kube-apiserver is among them, restartWithAPIServer restarts
// the other two after it as well.
func (c fastRestart) restartEdited(ctx context.Context, cp nodes.Node, current, edited map[profile.Component][]byte, wait waitFunc) error {
	switch _, apiserver := edited[profile.APIServer]; {
	case apiserver:
		return c.restartWithAPIServer(ctx, cp, current, edited, wait)
	case len(edited) > 0:
		return c.restartStaticPods(ctx, cp, edited, wait)
	}
	return nil
}

// restartWithAPIServer restarts kube-apiserver and, after it,
// kube-controller-manager and kube-scheduler: each from its manifest in
// edited or, where edited has none, in current (as it stands).
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
func (c fastRestart) restartWithAPIServer(ctx context.Context, cp nodes.Node, current, edited map[profile.Component][]byte, wait waitFunc) error {
	all := maps.Clone(current)
	maps.Copy(all, edited)
	start := time.Now()
	before := c.readMirrorPods(ctx, cp, all)
	if _, err := c.stopStaticPods(ctx, cp, all); err != nil {
		return err
	}
	c.logf("control plane stopped after %s", elapsed(start))
	others := maps.Clone(all)
	delete(others, profile.APIServer)
	rest := []profile.Component{profile.ControllerManager, profile.Scheduler}
	// Each start is a kubelet restart with the manifests put in while it is
	// stopped. A new kubelet never knew the old pods, so it starts the new
	// ones at once: the kubelet that ran them starts a static pod whose
	// predecessor of the same name it has not finished yet only after a
	// 10-15 s back-off, which waiting for the old pod's cgroup to go did not
	// always avoid with three pods stopped at once. The second restart also
	// gives the kubelet watches that started after kube-apiserver served.
	if err := c.startWithKubeletRestart(ctx, cp, []profile.Component{profile.APIServer}); err != nil {
		liftHold(cp)
		startStaticPods(cp, rest)
		return err
	}
	c.logf("kubelet restarted with kube-apiserver's manifest after %s", elapsed(start))
	if err := wait(profile.APIServer, before.hash(profile.APIServer), all[profile.APIServer]); err != nil {
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
	return waitAll(others, before, wait)
}

// startWithKubeletRestart restarts the control-plane node's kubelet with
// comps' staged manifests moved into its folder while it is stopped.
func (c fastRestart) startWithKubeletRestart(ctx context.Context, cp nodes.Node, comps []profile.Component) error {
	script, args := startScript(comps)
	return restartKubelet(ctx, cp, "systemctl stop kubelet && { "+script+"; }", args...)
}

// restartKubelet restarts the kubelet on n (running `before` first, when
// given, in the same shell, with args) and waits until a new kubelet process
// answers on its healthz port: a node's Ready condition alone would still
// show the old kubelet's last report.
func restartKubelet(ctx context.Context, n nodes.Node, before string, args ...string) error {
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
