package kindcluster

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
	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/clusters/toggle"
)

// SwitchTimeout bounds one gate switch. kube-apiserver takes the longest (it
// restarts etcd watches and its caches); a component that refuses its flags
// fails within it with its own log line.
var SwitchTimeout = 3 * time.Minute

// SetAdminAccess switches DRAAdminAccess in one component of the live cluster
// and waits until that component runs with the new flag. It returns how long
// that took.
func (c *Cluster) SetAdminAccess(ctx context.Context, comp profile.Component, enable bool) (time.Duration, error) {
	start := time.Now()
	var err error
	switch comp {
	case profile.APIServer, profile.ControllerManager, profile.Scheduler:
		err = c.switchStaticPod(ctx, comp, enable)
	case profile.Kubelet:
		err = c.switchKubelets(ctx, enable)
	default:
		return 0, fmt.Errorf("unknown component %q: use %s, %s, %s or %s", comp, profile.APIServer, profile.ControllerManager, profile.Scheduler, profile.Kubelet)
	}
	if err == nil {
		// The recorded profile follows what runs, so that the next move's
		// diff starts from the truth even when a move back never happened.
		gates := map[profile.Component]bool{}
		for k, v := range c.Profile.AdminAccess {
			gates[k] = v
		}
		gates[comp] = enable
		c.Profile = profile.Profile{Name: fmt.Sprintf("%s, %s %t", c.Profile.Name, comp, enable), Description: c.Profile.Description, AdminAccess: gates}
	}
	return time.Since(start), err
}

// MoveTo switches the live cluster from its current profile to `to`,
// restarting only the components whose effective gate differs. Static pods
// restart independently, so their manifests are all rewritten first and then
// waited for together: a move costs its slowest restart, not the sum. The
// durations returned run from the first write to each component's return.
func (c *Cluster) MoveTo(ctx context.Context, to profile.Profile) (map[profile.Component]time.Duration, error) {
	if err := to.CheckRunnable(c.Release); err != nil {
		return nil, err
	}
	changes := profile.Diff(c.Release, c.Profile, to)
	took := map[profile.Component]time.Duration{}
	static := map[profile.Component]bool{}
	for _, ch := range changes {
		if ch.Component == profile.Kubelet {
			d, err := c.SetAdminAccess(ctx, ch.Component, ch.Enable)
			took[ch.Component] = d
			if err != nil {
				return took, err
			}
			continue
		}
		static[ch.Component] = ch.Enable
	}
	st, err := c.SetStaticPodGates(ctx, static)
	for comp, d := range st {
		took[comp] = d
	}
	if err != nil {
		return took, err
	}
	c.Profile = to
	return took, nil
}

// SetStaticPodGates sets DRAAdminAccess in several control-plane components
// at once: every manifest is replaced first and then all are waited for, so
// the call costs the slowest restart, not the sum. The durations run from the
// start to each component's return.
func (c *Cluster) SetStaticPodGates(ctx context.Context, gates map[profile.Component]bool) (map[profile.Component]time.Duration, error) {
	cp, err := c.ControlPlane()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	// The hashes are read before any restart, while kube-apiserver answers.
	hashes := map[profile.Component]string{}
	for comp := range gates {
		hashes[comp] = c.mirrorPodHash(ctx, cp, comp)
	}
	written, err := c.writeStaticPodGates(ctx, cp, gates)
	if err != nil {
		return nil, err
	}
	took := map[profile.Component]time.Duration{}
	for _, comp := range written {
		err := c.waitGate(ctx, cp, comp, hashes[comp], gates[comp])
		took[comp] = time.Since(start)
		if err != nil {
			return took, err
		}
	}
	return took, nil
}

// WriteStaticPodGates restarts the components with the gate set and returns
// without waiting for them to come back (the GA lock spec watches them refuse).
func (c *Cluster) WriteStaticPodGates(ctx context.Context, gates map[profile.Component]bool) error {
	cp, err := c.ControlPlane()
	if err != nil {
		return err
	}
	_, err = c.writeStaticPodGates(ctx, cp, gates)
	return err
}

// writeStaticPodGates restarts, in one round, every component whose manifest
// does not already carry the wanted value, and returns those, in the order
// of profile.ControlPlane.
func (c *Cluster) writeStaticPodGates(ctx context.Context, cp nodes.Node, gates map[profile.Component]bool) ([]profile.Component, error) {
	updated := map[profile.Component][]byte{}
	var written []profile.Component
	for _, comp := range profile.ControlPlane {
		enable, ok := gates[comp]
		if !ok {
			continue
		}
		manifest, err := readFile(cp, manifestPath(comp))
		if err != nil {
			return nil, err
		}
		if current, err := toggle.StaticPodGates(manifest); err == nil {
			if v, ok := current[release.Gate]; ok && v == enable {
				continue // already in force
			}
		}
		if updated[comp], err = toggle.SetStaticPodGate(manifest, release.Gate, enable); err != nil {
			return nil, err
		}
		written = append(written, comp)
	}
	if len(written) == 0 {
		return nil, nil
	}
	return written, c.replaceStaticPods(ctx, cp, updated)
}

func (c *Cluster) switchStaticPod(ctx context.Context, comp profile.Component, enable bool) error {
	_, err := c.SetStaticPodGates(ctx, map[profile.Component]bool{comp: enable})
	return err
}

// waitGate waits until comp serves with the gate flag set to enable.
func (c *Cluster) waitGate(ctx context.Context, cp nodes.Node, comp profile.Component, oldHash string, enable bool) error {
	want := fmt.Sprintf("%s=%t", release.Gate, enable)
	return c.waitComponent(ctx, cp, comp, oldHash, "with "+want, false, func(p process) (bool, string) {
		return strings.Contains(p.Command, want), ""
	})
}

// mirrorPodHash is the config hash of comp's mirror pod, or "" while the
// apiserver does not answer.
func (c *Cluster) mirrorPodHash(ctx context.Context, cp nodes.Node, comp profile.Component) string {
	pod, err := c.Client.CoreV1().Pods("kube-system").Get(ctx, string(comp)+"-"+cp.String(), metav1.GetOptions{})
	if err != nil {
		return ""
	}
	return pod.Annotations[configHash]
}

const configHash = "kubernetes.io/config.hash"

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

func (c *Cluster) switchKubelets(ctx context.Context, enable bool) error {
	all, err := c.Nodes()
	if err != nil {
		return err
	}
	const path = "/var/lib/kubelet/config.yaml"
	for _, n := range all {
		cfg, err := readFile(n, path)
		if err != nil {
			return err
		}
		updated, err := toggle.SetKubeletGate(cfg, release.Gate, enable)
		if err != nil {
			return err
		}
		if err := writeFile(n, path, updated); err != nil {
			return err
		}
		if err := restartKubelet(ctx, n, ""); err != nil {
			return err
		}
	}
	return waitNodesReady(ctx, c)
}

// restartKubelet restarts the kubelet on n (running `before` first, when
// given, in the same shell) and waits until a new kubelet process answers on
// its healthz port: a node's Ready condition alone would still show the old
// kubelet's last report.
func restartKubelet(ctx context.Context, n nodes.Node, before string) error {
	old, _ := run(n, "systemctl show -p MainPID --value kubelet")
	script := "systemctl restart kubelet"
	if before != "" {
		script = before + " && " + script
	}
	if out, err := run(n, script); err != nil {
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
		var journal bytes.Buffer
		n.Command("sh", "-c", "journalctl -u kubelet --no-pager -n 5 -o cat").SetStdout(&journal).Run()
		return fmt.Errorf("the kubelet on %s did not come back within %s (last seen: %s); its last log lines:\n%s", n, SwitchTimeout, seen, journal.String())
	}
	return nil
}
