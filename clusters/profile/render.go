// SPDX-License-Identifier: Apache-2.0

package profile

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/yaml"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
)

// KindConfig is kind's own v1alpha4 Cluster, the config the suite renders;
// its YAML is kept with a run's artifacts and read in tests.
type KindConfig = v1alpha4.Cluster

// kubeadmKeys maps a control-plane component to its ClusterConfiguration section.
var kubeadmKeys = map[Component]string{
	APIServer:         "apiServer",
	ControllerManager: "controllerManager",
	Scheduler:         "scheduler",
}

// Render builds the kind config of a two-node cluster (control plane + worker)
// running profile p on release r with node image `image`.
func Render(r release.Release, p Profile, name, image string) (KindConfig, error) {
	if err := p.CheckRunnable(r); err != nil {
		return KindConfig{}, err
	}
	cfg := KindConfig{
		TypeMeta: v1alpha4.TypeMeta{Kind: "Cluster", APIVersion: "kind.x-k8s.io/v1alpha4"}, Name: name,
		// The suite installs its own pod network (package kindcluster), the
		// same for published and offline-built node images. nftables: the
		// node image carries nft, and it needs no legacy iptables modules.
		Networking:    v1alpha4.Networking{DisableDefaultCNI: true, KubeProxyMode: v1alpha4.NFTablesProxyMode},
		RuntimeConfig: r.RuntimeConfig,
		Nodes:         []v1alpha4.Node{{Role: v1alpha4.ControlPlaneRole, Image: image}, {Role: v1alpha4.WorkerRole, Image: image}},
	}

	if r.KubeadmV1Beta4 {
		// v1beta4 extraArgs are lists without a merge key: a strategic merge
		// would replace kind's own args, so append with JSON-6902 instead
		// (kubeadm lets an appended arg override its default of that name).
		for _, c := range ControlPlane {
			args := controlPlaneArgs(r, p, c)
			if c == Scheduler && len(args) > 0 {
				// kind writes the scheduler's extraArgs only for cluster-wide
				// feature gates or IPv6, neither of which the suite uses, so
				// the list is null and cannot be appended to: set it whole.
				var items []string
				for _, a := range args {
					items = append(items, fmt.Sprintf("{name: %s, value: %q}", a.name, a.value))
				}
				cfg.KubeadmConfigPatchesJSON6902 = append(cfg.KubeadmConfigPatchesJSON6902, v1alpha4.PatchJSON6902{
					Group: "kubeadm.k8s.io", Version: "v1beta4", Kind: "ClusterConfiguration",
					Patch: fmt.Sprintf("- op: add\n  path: /%s/extraArgs\n  value: [%s]\n", kubeadmKeys[c], strings.Join(items, ", ")),
				})
				continue
			}
			// kind always writes kube-apiserver's (runtime-config) and
			// kube-controller-manager's (enable-hostpath-provisioner).
			for _, a := range args {
				cfg.KubeadmConfigPatchesJSON6902 = append(cfg.KubeadmConfigPatchesJSON6902, v1alpha4.PatchJSON6902{
					Group: "kubeadm.k8s.io", Version: "v1beta4", Kind: "ClusterConfiguration",
					Patch: fmt.Sprintf("- op: add\n  path: /%s/extraArgs/-\n  value: {name: %s, value: %q}\n",
						kubeadmKeys[c], a.name, a.value),
				})
			}
		}
	} else {
		cluster := map[string]any{"kind": "ClusterConfiguration"}
		for _, c := range ControlPlane {
			args := map[string]string{}
			for _, a := range controlPlaneArgs(r, p, c) {
				args[a.name] = a.value
			}
			if len(args) > 0 {
				cluster[kubeadmKeys[c]] = map[string]any{"extraArgs": args}
			}
		}
		if len(cluster) > 1 {
			patch, err := yaml.Marshal(cluster)
			if err != nil {
				return KindConfig{}, err
			}
			cfg.KubeadmConfigPatches = append(cfg.KubeadmConfigPatches, string(patch))
		}
	}

	kubelet := map[string]any{"kind": "KubeletConfiguration"}
	if gates := p.Gates(r, Kubelet); len(gates) > 0 {
		kubelet["featureGates"] = gates
	}
	// A static pod's mirror pod that kube-apiserver refused (it does for a
	// moment after a restart, while its node authorizer catches up) is only
	// retried at the kubelet's periodic pod sync, every minute by default:
	// measured 55 s, and 140 s in one upgrade step, of a gate move spent
	// waiting for it. Every 10 s bounds that.
	kubelet["syncFrequency"] = "10s"
	// Specs read kube-scheduler's log through the API, which serves a
	// container's live log file only; at the allocator's log level it
	// writes some 170 kB per allocation attempt, so the default rotation at
	// 10 MiB renamed the file every few dozen attempts, and a rotation
	// between a spec's allocations and its read left it a file without
	// them. A negative size turns rotation off: a container's log stays
	// whole in the one file while the container runs.
	kubelet["containerLogMaxSize"] = "-1"
	if r.KubeletFailCgroupV1 {
		// Harmless on cgroup v2 hosts; required on v1 hosts such as this project's VMs.
		kubelet["failCgroupV1"] = false
	}
	patch, err := yaml.Marshal(kubelet)
	if err != nil {
		return KindConfig{}, err
	}
	cfg.KubeadmConfigPatches = append(cfg.KubeadmConfigPatches, string(patch))
	return cfg, nil
}

type arg struct{ name, value string }

// controlPlaneArgs are the flags the suite adds to a control-plane component:
// its feature gates, and for kube-scheduler its allocator's log level and no leader election (one
// control-plane node: nothing to elect, and a restarted scheduler would wait
// out its killed predecessor's 15 s lease). kube-controller-manager keeps
// kubeadm's leader election: started without it, it ran its controllers
// before kube-apiserver was fully up, and on one 1.33 cluster the quota
// controller then never released a deleted claim's device count.
func controlPlaneArgs(r release.Release, p Profile, c Component) []arg {
	var args []arg
	if gates := p.Gates(r, c); len(gates) > 0 {
		args = append(args, arg{"feature-gates", FormatGates(gates)})
	}
	if c == Scheduler {
		args = append(args, arg{"leader-elect", "false"})
		// Specs read which implementation allocated, and why it passed
		// over a device, in its log.
		args = append(args, arg{"vmodule", release.AllocatorVModule})
	}
	return args
}

// YAML renders the config as kind reads it.
func YAML(c KindConfig) ([]byte, error) { return yaml.Marshal(c) }
