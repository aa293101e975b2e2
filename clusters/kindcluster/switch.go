package kindcluster

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
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
// at once: every manifest is rewritten first and then all are waited for, so
// the call costs the slowest restart, not the sum. The durations run from the
// first write to each component's return.
func (c *Cluster) SetStaticPodGates(ctx context.Context, gates map[profile.Component]bool) (map[profile.Component]time.Duration, error) {
	cp, err := c.ControlPlane()
	if err != nil {
		return nil, err
	}
	// Stable order, and the hashes read before any write, while kube-apiserver still answers.
	var comps []profile.Component
	hashes := map[profile.Component]string{}
	for _, comp := range profile.ControlPlane {
		if _, ok := gates[comp]; ok {
			comps = append(comps, comp)
			hashes[comp] = c.mirrorPodHash(ctx, cp, comp)
		}
	}
	took := map[profile.Component]time.Duration{}
	start := time.Now()
	var written []profile.Component
	for _, comp := range comps {
		_, changed, err := c.WriteStaticPodGate(ctx, comp, gates[comp])
		if err != nil {
			return took, err
		}
		if changed {
			written = append(written, comp)
		}
	}
	for _, comp := range written {
		err := c.waitGate(ctx, cp, comp, hashes[comp], gates[comp])
		took[comp] = time.Since(start)
		if err != nil {
			return took, err
		}
	}
	return took, nil
}

func manifestPath(comp profile.Component) string {
	return "/etc/kubernetes/manifests/" + string(comp) + ".yaml"
}

func readFile(n nodes.Node, path string) ([]byte, error) {
	var out bytes.Buffer
	if err := n.Command("cat", path).SetStdout(&out).Run(); err != nil {
		return nil, fmt.Errorf("reading %s on %s: %w", path, n, err)
	}
	return out.Bytes(), nil
}

// writeFile replaces a file atomically; for manifests the temporary copy lives
// outside the kubelet's manifest folder so it never sees a half-written pod.
func writeFile(n nodes.Node, path string, data []byte) error {
	tmp := "/etc/kubernetes/." + strings.ReplaceAll(strings.TrimPrefix(path, "/"), "/", "_") + ".new"
	script := fmt.Sprintf("cat > %s && mv %s %s", tmp, tmp, path)
	if err := n.Command("sh", "-c", script).SetStdin(bytes.NewReader(data)).Run(); err != nil {
		return fmt.Errorf("writing %s on %s: %w", path, n, err)
	}
	return nil
}

// WriteStaticPodGate rewrites the component's static pod manifest with the
// gate set, and returns at once with the mirror pod's config hash from
// before; the kubelet restarts the component on its own.
func (c *Cluster) WriteStaticPodGate(ctx context.Context, comp profile.Component, enable bool) (oldHash string, changed bool, err error) {
	cp, err := c.ControlPlane()
	if err != nil {
		return "", false, err
	}
	manifest, err := readFile(cp, manifestPath(comp))
	if err != nil {
		return "", false, err
	}
	if gates, err := toggle.StaticPodGates(manifest); err == nil {
		if v, ok := gates[release.Gate]; ok && v == enable {
			return "", false, nil // already in force
		}
	}
	updated, err := toggle.SetStaticPodGate(manifest, release.Gate, enable)
	if err != nil {
		return "", false, err
	}
	return c.mirrorPodHash(ctx, cp, comp), true, writeFile(cp, manifestPath(comp), updated)
}

func (c *Cluster) switchStaticPod(ctx context.Context, comp profile.Component, enable bool) error {
	cp, err := c.ControlPlane()
	if err != nil {
		return err
	}
	oldHash, changed, err := c.WriteStaticPodGate(ctx, comp, enable)
	if err != nil || !changed {
		return err
	}
	return c.waitGate(ctx, cp, comp, oldHash, enable)
}

// waitGate waits until comp runs, Ready, with the gate flag set to enable.
func (c *Cluster) waitGate(ctx context.Context, cp nodes.Node, comp profile.Component, oldHash string, enable bool) error {
	want := fmt.Sprintf("%s=%t", release.Gate, enable)
	return c.waitStaticPod(ctx, cp, comp, oldHash, "with "+want, func(pod *corev1.Pod) (bool, string) {
		return strings.Contains(strings.Join(pod.Spec.Containers[0].Command, " "), want), ""
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

// waitStaticPod waits until the kubelet runs comp from a manifest newer than
// oldHash, Ready, and inForce (which may add to what a failure reports) says
// the change took. A component that refuses its new manifest fails here with
// its own last log lines.
func (c *Cluster) waitStaticPod(ctx context.Context, cp nodes.Node, comp profile.Component, oldHash, what string, inForce func(*corev1.Pod) (bool, string)) error {
	podName := string(comp) + "-" + cp.String()
	var seen string
	err := wait.PollUntilContextTimeout(ctx, time.Second, SwitchTimeout, true, func(ctx context.Context) (bool, error) {
		pod, err := c.Client.CoreV1().Pods("kube-system").Get(ctx, podName, metav1.GetOptions{})
		if err != nil {
			seen = err.Error() // the apiserver itself may be restarting
			return false, nil
		}
		hash := pod.Annotations[configHash]
		seen = fmt.Sprintf("config hash %s (was %s), image %s, phase %s, ready %t", hash, oldHash, pod.Spec.Containers[0].Image, pod.Status.Phase, podReady(*pod))
		if hash == oldHash || !podReady(*pod) {
			return false, nil
		}
		ok, more := inForce(pod)
		if more != "" {
			seen += ", " + more
		}
		return ok, nil
	})
	if err != nil {
		return fmt.Errorf("%s did not come back %s within %s (last seen: %s); its last log lines:\n%s",
			comp, what, SwitchTimeout, seen, c.componentLog(cp, comp))
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
		if err := n.Command("systemctl", "restart", "kubelet").Run(); err != nil {
			return fmt.Errorf("restarting the kubelet on %s: %w", n, err)
		}
	}
	return waitNodesReady(ctx, c)
}
