// SPDX-License-Identifier: Apache-2.0

package kindcluster

// Probes and waits: what a component's process looks like from its node,
// the wait until it serves on its new configuration, and the log lines a
// component or kubelet that refuses its configuration leaves.

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/kep5018/adminaccess-conformance/clusters/profile"
)

// healthURL is the endpoint, inside the control-plane node, where each
// component says it serves; all allow anonymous reads (kubeadm's defaults).
var healthURL = map[profile.Component]string{
	profile.APIServer:         "https://127.0.0.1:" + apiServerPort + "/readyz",
	profile.ControllerManager: "https://127.0.0.1:10257/healthz",
	profile.Scheduler:         "https://127.0.0.1:10259/healthz",
}

// process is what the control-plane node shows of a component's process.
type process struct {
	PID     string
	Command string // the command line, arguments separated by spaces
	Version string // the binary's --version output, when asked for
	Health  string // the health endpoint's answer ("ok" when it serves)
}

// brief is String with the health endpoint's answer cut to whether it
// serves and, if not, its first failed check: a progress line per change.
func (p process) brief() string {
	switch {
	case p.PID == "":
		return "no process"
	case p.Health == "ok":
		return "pid " + p.PID + ", serving"
	case p.Health == "":
		return "pid " + p.PID + ", no answer"
	}
	for _, line := range strings.Split(p.Health, "\n") {
		if strings.HasPrefix(line, "[-]") {
			return "pid " + p.PID + ", not ready: " + line
		}
	}
	return "pid " + p.PID + ", not ready"
}

func (p process) String() string {
	if p.PID == "" {
		return "no process"
	}
	s := "pid " + p.PID + ", health " + p.Health
	if p.Version != "" {
		s += ", " + p.Version
	}
	return s
}

const probeScript = `pid=$(pgrep -o -f "^$1 ") || exit 0
echo "$pid"
tr '\0' ' ' < /proc/$pid/cmdline; echo
if [ "$3" = version ]; then /proc/$pid/exe --version 2>&1 | head -n 1; else echo; fi
curl -sk --max-time 2 "$2" | head -c 200; echo`

// probe reads comp's process on the node; withVersion also runs its binary's
// --version (about 0.1 s more).
func probe(n nodes.Node, comp profile.Component, withVersion bool) process {
	flag := ""
	if withVersion {
		flag = "version"
	}
	out, _ := run(n, probeScript, string(comp), healthURL[comp], flag)
	lines := strings.SplitN(out, "\n", 4)
	for len(lines) < 4 {
		lines = append(lines, "")
	}
	return process{PID: lines[0], Command: strings.TrimSpace(lines[1]), Version: strings.TrimSpace(lines[2]), Health: strings.TrimSpace(lines[3])}
}

// componentWait is what the wait for one restarted component looks for.
type componentWait struct {
	comp profile.Component
	// oldHash is its mirror pod's config hash before the restart ("" for
	// none): the kubelet has published the new pod once it differs.
	oldHash string
	// uid, where set, is the UID the new manifest gives the pod: the
	// kubelet has published the new pod once the config hash is that UID
	// (the kubelet's config hash of a pod whose manifest sets a UID). The
	// plain restart sets it, as it knows no old hash for sure after a fast
	// attempt that fell back.
	uid string
	// oldPID, where set, is the process that ran before the restart: until
	// it has gone the new pod has not started (the kubelet starts a static
	// pod only once its predecessor of that name has finished), though the
	// old process may show the target as well.
	oldPID string
	target
}

// waitComponent waits until comp runs a process (other than oldPID, where
// set) that inForce accepts, that
// process answers on its health endpoint, a read of its mirror pod succeeds
// (for kube-apiserver: and RBAC grants kube-scheduler's watch, see
// rbacNotReady), and (but for kube-apiserver) the kubelet has published the
// new mirror pod (config hash other than oldHash, or uid where set), which port-forwards to
// its metrics need; on the way it deletes a stale mirror pod and
// kube-controller-manager's stale lease. kube-apiserver's wait lifts the
// hold on its clients when it ends, served or not. It ends when the component
// serves on its new configuration, not when its pod is marked Ready (for
// the controller manager and the scheduler that is a startup probe 10 s
// later). A component that refuses the change fails here with its own last
// log lines.
func (c *Cluster) waitComponent(ctx context.Context, cp nodes.Node, w componentWait) error {
	comp, oldHash, what, withVersion, inForce := w.comp, w.oldHash, w.what, w.withVersion, w.inForce
	podName := string(comp) + "-" + cp.String()
	if comp == profile.APIServer {
		defer liftHold(cp)
	}
	var seen, logged string
	var last process
	leaseChecked := false
	check := func(ctx context.Context) (bool, error) {
		p := probe(cp, comp, withVersion)
		last = p
		seen = p.brief()
		if p.PID == "" {
			return false, nil
		}
		if p.PID == w.oldPID {
			seen += ", the process from before the restart"
			return false, nil
		}
		ok, more := inForce(p)
		if more != "" {
			seen += ", " + more
		}
		if !ok || p.Health != "ok" {
			return false, nil
		}
		pod, err := c.Client.CoreV1().Pods("kube-system").Get(ctx, podName, metav1.GetOptions{})
		if err != nil {
			// A request failed: a new kube-apiserver is not serving yet,
			// whatever its /readyz said.
			seen += ", reading its mirror pod: " + err.Error()
			return false, nil
		}
		if comp == profile.ControllerManager && !leaseChecked {
			leaseChecked = true
			c.releaseStaleLease(ctx, cp, p.PID)
		}
		if comp == profile.APIServer {
			// The suite's own requests are system:masters, which skips RBAC.
			// A new kube-apiserver has been seen to refuse the other
			// components' watches (403) while its RBAC cache fills, and each
			// refusal lengthens their client's back-off: the move ends only
			// when RBAC grants what kube-scheduler needs.
			if why := c.rbacNotReady(ctx); why != "" {
				seen += ", " + why
				return false, nil
			}
		}
		// kube-apiserver's own mirror pod follows when the kubelet next
		// syncs (nothing in the suite reads it); the other components'
		// are needed at once, for port-forwards to their metrics.
		hash := pod.Annotations[configHash]
		stale := hash == oldHash
		if w.uid != "" {
			stale = hash != w.uid
		}
		if comp != profile.APIServer && stale {
			seen += ", mirror pod still of the old manifest"
			c.deleteStaleMirrorPod(ctx, pod)
			return false, nil
		}
		seen = "serves " + what
		return true, nil
	}
	start := time.Now()
	err := wait.PollUntilContextTimeout(ctx, pollInterval, SwitchTimeout, true, func(ctx context.Context) (bool, error) {
		done, err := check(ctx)
		// Each change in what the wait sees is a progress line: a slow
		// move then says which step took its time.
		if seen != logged {
			c.logf("%s, +%s: %s", comp, elapsed(start), seen)
			logged = seen
		}
		return done, err
	})
	if err != nil {
		return fmt.Errorf("%s did not come back %s %s (last seen: %s; %s); its last log lines:\n%s",
			comp, what, inTime(ctx, SwitchTimeout), seen, last, c.componentLog(cp, comp))
	}
	return nil
}

// componentLog returns the tail of a static pod's newest container log on the
// node, where a component that refuses its flags says why.
func (c *Cluster) componentLog(n nodes.Node, comp profile.Component) string {
	var out bytes.Buffer
	script := fmt.Sprintf("f=$(ls -t /var/log/pods/kube-system_%s-*/%s/*.log 2>/dev/null | head -1); [ -n \"$f\" ] && tail -n 8 \"$f\"", comp, comp)
	n.Command("sh", "-c", script).SetStdout(&out).Run()
	return out.String()
}

// ComponentLog is componentLog for the control-plane node.
func (c *Cluster) ComponentLog(comp profile.Component) string {
	cp, err := c.ControlPlane()
	if err != nil {
		return err.Error()
	}
	return c.componentLog(cp, comp)
}

// kubeletJournal is the kubelet's last log lines on n, where a kubelet that
// refuses its flags or configuration says why.
func kubeletJournal(n nodes.Node) string {
	out, _ := run(n, "journalctl -u kubelet --no-pager -n 5 -o cat")
	return out
}
