// SPDX-License-Identifier: Apache-2.0

package kindcluster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/version"
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/kep5018/adminaccess-conformance/clusters/nodeconfig"
	"github.com/kep5018/adminaccess-conformance/clusters/nodesource"
	"github.com/kep5018/adminaccess-conformance/clusters/pipeline"
	"github.com/kep5018/adminaccess-conformance/clusters/profile"
)

// Step is one named part of a release switch and how long it took.
type Step struct {
	Name string
	Took time.Duration
}

func (s Step) String() string {
	return fmt.Sprintf("%s %s", s.Name, s.Took.Round(100*time.Millisecond))
}

// SwitchRelease moves the control plane and every kubelet of the live cluster
// to bits.Release in place, in the order the version skew policy allows: for
// an upgrade the control plane first, then the kubelets; for a downgrade the
// kubelets first. Either way kube-apiserver starts before the controller
// manager and scheduler (see restartWithAPIServer). Each static pod keeps every flag
// kubeadm gave it; only its image changes. etcd, CoreDNS and kube-proxy stay
// as they are, as in a control-plane and kubelet upgrade. Running containers
// are never restarted by the suite: a kubelet restart leaves them running.
func (c *Cluster) SwitchRelease(ctx context.Context, bits *nodesource.ReleaseBits) ([]Step, error) {
	to := bits.Release
	// The whole switch: etcd's pin restarts etcd, and the control plane
	// settles after the restarts (each also announced on its own).
	defer c.moving("release switch from " + c.Release.Minor + " to " + to.Minor)()
	upgrade := to.Minor > c.Release.Minor
	cp, err := c.ControlPlane()
	if err != nil {
		return nil, err
	}
	// Each step works on the cluster with the switch's context; none is
	// started once a step failed, and the switch checks no context between
	// them (its steps end on it themselves).
	loadImages := pipeline.Step[*Cluster]{Name: "load " + to.Minor + " images", Run: func(c *Cluster) error { return c.loadReleaseImages(cp, bits) }}
	var restarted Restart
	control := pipeline.Step[*Cluster]{Name: "control plane (kube-apiserver, then kube-controller-manager and kube-scheduler)", Run: func(c *Cluster) (err error) {
		restarted, err = c.switchControlPlaneImages(ctx, cp, bits)
		return err
	}}
	kubelets := pipeline.Step[*Cluster]{Name: "kubelets", Run: func(c *Cluster) error { return c.switchKubeletBinaries(ctx, bits) }}
	// The version skew policy: going up the control plane first, coming
	// down the kubelets first; kube-apiserver is never older than the
	// components that talk to it (restartWithAPIServer).
	pin := pipeline.Step[*Cluster]{Name: "pin etcd's UID", Run: func(c *Cluster) error { return c.pinEtcdUID(ctx, cp) }}
	order := []pipeline.Step[*Cluster]{pin, loadImages, control, kubelets}
	if !upgrade {
		order = []pipeline.Step[*Cluster]{pin, loadImages, kubelets, control}
	}
	order = append(order, pipeline.Step[*Cluster]{Name: "control plane settled", Run: func(c *Cluster) error { return c.waitSettled(ctx, cp, bits) }})
	var steps []Step
	err = pipeline.Run(c, order, pipeline.Hooks{Done: func(name string, took time.Duration) {
		s := Step{Name: name, Took: took}
		// The control plane's step is named once it ran for the restarter
		// it went through.
		if name == control.Name {
			s.Name += restarted.Note()
		}
		steps = append(steps, s)
		c.logf("%s -> %s: %s", c.Release.Minor, to.Minor, s)
	}})
	if err != nil {
		return steps, fmt.Errorf("switching cluster %s from Kubernetes %s to %s, %w", c.Name, c.Release.Version, to.Version, err)
	}
	c.Release = to
	return steps, nil
}

// LoadReleaseImages puts bits' control-plane images on the control-plane
// node ahead of SwitchRelease, whose own load then finds them there: a
// caller with idle time before the switch (the suite, while its parallel
// specs run) takes the load out of the switch. Loading images starts and
// stops nothing.
func (c *Cluster) LoadReleaseImages(bits *nodesource.ReleaseBits) error {
	cp, err := c.ControlPlane()
	if err != nil {
		return err
	}
	return c.loadReleaseImages(cp, bits)
}

// loadReleaseImages loads bits' images onto cp unless they are there.
func (c *Cluster) loadReleaseImages(cp nodes.Node, bits *nodesource.ReleaseBits) error {
	to := bits.Release
	// Coming back down, the node still has the images it booted with.
	if len(missingImages(cp, bits)) == 0 {
		c.logf("the %s images are on %s already", to.Minor, cp)
		return nil
	}
	if err := c.LoadImageArchive(bits.Archive(), cp); err != nil {
		return err
	}
	if missing := missingImages(cp, bits); len(missing) > 0 {
		return fmt.Errorf("images %v are not on %s after loading %s: the %s node image does not carry them", missing, cp, bits.Archive(), to.Minor)
	}
	return nil
}

// etcdManifest is etcd's static pod manifest on the control-plane node.
const etcdManifest = "/etc/kubernetes/manifests/etcd.yaml"

// pinEtcdUID writes into etcd's manifest, where it sets none, the UID the
// kubelet runs etcd's pod under (its mirror pod's config hash). The kubelet
// derives a static pod's UID from the manifest and its own version, so a
// kubelet of another release sees a new pod and recreates etcd under a
// kube-apiserver that keeps running, whose etcd client then waits out its
// reconnect back-off, tens of seconds. With the UID in the manifest the running kubelet sees
// the same pod, unchanged, and so does the next. (The other static pods get
// UIDs of their own at every restart, see stopStaticPods.)
func (c *Cluster) pinEtcdUID(ctx context.Context, cp nodes.Node) error {
	manifest, err := readFile(cp, etcdManifest)
	if err != nil {
		return err
	}
	if uid, err := nodeconfig.StaticPodUID(manifest); err != nil || uid != "" {
		return err
	}
	mirror, err := c.Client.CoreV1().Pods("kube-system").Get(ctx, "etcd-"+cp.String(), metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading etcd's mirror pod: %w", err)
	}
	uid := mirror.Annotations[configHash]
	if uid == "" {
		return fmt.Errorf("etcd's mirror pod has no %s annotation", configHash)
	}
	pinned, err := nodeconfig.PinStaticPodUID(manifest, uid)
	if err != nil {
		return fmt.Errorf("%s: %w", etcdManifest, err)
	}
	c.logf("etcd's manifest pinned to the UID it runs under, %s", uid)
	return writeFile(cp, etcdManifest, pinned)
}

// switchControlPlaneImages points the static pods at the target release's
// images (loaded by then) and waits until each component's binary is of the target release
// and serves. kube-apiserver starts first, kube-controller-manager and
// kube-scheduler once it serves (restartWithAPIServer). A component already
// on its image (a restore after a switch that failed part-way) is not
// edited.
func (c *Cluster) switchControlPlaneImages(ctx context.Context, cp nodes.Node, bits *nodesource.ReleaseBits) (Restart, error) {
	to := bits.Release
	manifests, err := readManifests(cp)
	if err != nil {
		return Restart{}, err
	}
	edited := map[profile.Component][]byte{}
	for _, comp := range profile.ControlPlane {
		image := bits.Images[comp]
		manifest := manifests[comp]
		running, err := nodeconfig.StaticPodImage(manifest)
		if err != nil {
			return Restart{}, fmt.Errorf("%s: %w", comp, err)
		}
		if running == image {
			continue
		}
		updated, err := nodeconfig.SetStaticPodImage(manifest, image)
		if err != nil {
			return Restart{}, err
		}
		edited[comp] = updated
	}
	start := time.Now()
	want := "Kubernetes " + to.GitVersion()
	binary := target{what: "as the " + to.Minor + " image", withVersion: true,
		inForce: func(p process) (bool, string) { return p.Version == want, "" }}
	return c.restart(ctx, change{node: cp, current: manifests, edited: edited,
		target: always(binary),
		served: func(comp profile.Component, err error) {
			if err == nil {
				c.logf("%s serves as Kubernetes %s after %s", comp, to.Version, elapsed(start))
			}
		}})
}

// missingImages lists the control-plane images of bits that the node's
// containerd does not have (all of them where it cannot be asked). ctr, not
// crictl: offline-built nodes carry only containerd's own client.
func missingImages(n nodes.Node, bits *nodesource.ReleaseBits) []string {
	var want []string
	for _, comp := range profile.ControlPlane {
		want = append(want, bits.Images[comp])
	}
	have, err := run(n, "ctr -n k8s.io images ls -q")
	if err != nil {
		return want
	}
	return absent(want, strings.Fields(have))
}

// absent is what of want is not in have.
func absent(want, have []string) []string {
	var out []string
	for _, w := range want {
		if !slices.Contains(have, w) {
			out = append(out, w)
		}
	}
	return out
}

// switchKubeletBinaries replaces the kubelet on every node, one node at a
// time, and waits until each node reports the new version and is Ready.
// (All nodes at once was slower on 2 cores.)
func (c *Cluster) switchKubeletBinaries(ctx context.Context, bits *nodesource.ReleaseBits) error {
	all, err := c.Nodes()
	if err != nil {
		return err
	}
	for _, n := range all {
		if err := c.switchKubelet(ctx, n, bits); err != nil {
			return err
		}
	}
	return nil
}

// switchKubelet does on one node what a package upgrade plus `kubeadm upgrade
// node` do: the new binary, a kubeadm flags file and a configuration it
// accepts, a restart. It is idempotent, so a restore after a switch that
// failed part-way can run it again.
func (c *Cluster) switchKubelet(ctx context.Context, n nodes.Node, bits *nodesource.ReleaseBits) error {
	const (
		next       = "/usr/bin/kubelet.next"
		flagsPath  = "/var/lib/kubelet/kubeadm-flags.env"
		configPath = "/var/lib/kubelet/config.yaml"
	)
	if out, err := exec.CommandContext(ctx, "docker", "cp", bits.Kubelet(), n.String()+":"+next).CombinedOutput(); err != nil {
		return fmt.Errorf("copying the %s kubelet into %s: %v: %s", bits.Release.Minor, n, err, bytes.TrimSpace(out))
	}
	var help bytes.Buffer
	if err := n.Command(next, "--help").SetStdout(&help).SetStderr(&help).Run(); err != nil {
		return fmt.Errorf("%s --help on %s: %w", next, n, err)
	}
	flags, err := readFile(n, flagsPath)
	if err != nil {
		return err
	}
	kept, dropped, err := nodeconfig.DropUnknownKubeletFlags(flags, help.String())
	if err != nil {
		return fmt.Errorf("%s on %s: %w", flagsPath, n, err)
	}
	if len(dropped) > 0 {
		if err := writeFile(n, flagsPath, kept); err != nil {
			return err
		}
	}
	if bits.Release.KubeletFailCgroupV1 {
		// Kept on a downgrade: older kubelets know the field too.
		cfg, err := readFile(n, configPath)
		if err != nil {
			return err
		}
		if v, err := nodeconfig.KubeletField(cfg, "failCgroupV1"); err != nil {
			return fmt.Errorf("%s on %s: %w", configPath, n, err)
		} else if v != false {
			updated, err := nodeconfig.SetKubeletField(cfg, "failCgroupV1", false)
			if err != nil {
				return err
			}
			if err := writeFile(n, configPath, updated); err != nil {
				return err
			}
		}
	}
	if err := c.restartKubelet(ctx, n, "mv "+next+" /usr/bin/kubelet"); err != nil {
		return err
	}
	if err := c.waitKubeletVersion(ctx, n.String(), bits.Release.GitVersion()); err != nil {
		return fmt.Errorf("%w; the kubelet's last log lines:\n%s", err, kubeletJournal(n))
	}
	return nil
}

// settledFor is how long the control plane must answer without a break
// before a switch counts as done, in one-second looks. It was 10 while a new
// kubelet recreated static pods whose UIDs it derived (kube-apiserver gone
// 1.8 s into the window and back at 7.5 s, docs/benchmarks.md). Since every
// static pod's UID is in its manifest (pinEtcdUID, and the restarts' own
// UIDs), no window has seen a break: 52 switches in 26 runs of 1.35 and
// 1.36 on this project's VM, each settled on its first look (9.3-11.0 s for
// ten). Three looks still catch a kube-apiserver that refuses a request for
// a moment after it served.
const settledFor = 3

// waitSettled waits until the control plane has answered, settledFor polls
// in a row, with every component on its new image and Ready and an
// authorized request served. A new kubelet may recreate the static pods (their
// config hash can change between releases). Moving the control-plane
// node's kubelet in with the control plane's restarts instead was tried:
// the new static pods then took far longer to serve. And a kube-apiserver that has just
// started has been seen to refuse cluster-admin for a moment (403) while its
// authorizer catches up: specs must not take either for a broken workload.
func (c *Cluster) waitSettled(ctx context.Context, cp nodes.Node, bits *nodesource.ReleaseBits) error {
	var seen, last string
	good := 0
	start := time.Now()
	err := wait.PollUntilContextTimeout(ctx, time.Second, SwitchTimeout, true, func(ctx context.Context) (bool, error) {
		now := c.controlPlaneState(ctx, cp, bits)
		// Each break is said with when it was seen: whether the new kubelets
		// recreate the static pods, and when, is what this window is for.
		if now != "" && now != last {
			c.logf("settling, +%s: %s", elapsed(start), now)
		}
		last = now
		if now != "" {
			seen = now
			good = 0
			return false, nil
		}
		good++
		return good >= settledFor, nil
	})
	if err != nil {
		return fmt.Errorf("the control plane did not settle on Kubernetes %s %s (last seen: %s)", bits.Release.Version, inTime(ctx, SwitchTimeout), seen)
	}
	return nil
}

// controlPlaneState says what is not yet as it should be after a switch, or
// "". Its requests are bounded (quickRead): the new kubelet may be
// recreating kube-apiserver, and one unbounded look could then take 10 s of
// a window counted in one-second looks.
func (c *Cluster) controlPlaneState(ctx context.Context, cp nodes.Node, bits *nodesource.ReleaseBits) string {
	ctx, cancel := context.WithTimeout(ctx, quickRead)
	defer cancel()
	raw, err := c.Client.Discovery().RESTClient().Get().AbsPath("/version").Do(ctx).Raw()
	if err != nil {
		return "reading the server version: " + err.Error()
	}
	var v version.Info
	if err := json.Unmarshal(raw, &v); err != nil {
		return "reading the server version: " + err.Error()
	}
	if v.GitVersion != bits.Release.GitVersion() {
		return "server version " + v.GitVersion
	}
	for _, comp := range profile.ControlPlane {
		p := probe(cp, comp, true)
		if p.Version != "Kubernetes "+bits.Release.GitVersion() || p.Health != "ok" {
			return fmt.Sprintf("%s: %s", comp, p)
		}
	}
	if _, err := c.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
		return err.Error()
	}
	return ""
}

func (c *Cluster) waitKubeletVersion(ctx context.Context, node, version string) error {
	var seen string
	err := wait.PollUntilContextTimeout(ctx, pollInterval, SwitchTimeout, true, func(ctx context.Context) (bool, error) {
		n, err := c.Client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			seen = err.Error()
			return false, nil
		}
		ready := false
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady {
				ready = cond.Status == corev1.ConditionTrue
			}
		}
		seen = fmt.Sprintf("kubelet %s, ready %t", n.Status.NodeInfo.KubeletVersion, ready)
		return ready && n.Status.NodeInfo.KubeletVersion == version, nil
	})
	if err != nil {
		return fmt.Errorf("node %s did not report a Ready kubelet %s %s (last seen: %s)", node, version, inTime(ctx, SwitchTimeout), seen)
	}
	return nil
}
