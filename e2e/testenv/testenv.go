// SPDX-License-Identifier: Apache-2.0

// Package testenv is the cluster the specs run against: made by the suite for
// one release and profile (and deleted after), or an existing one reached with
// --kubeconfig. It knows nothing of Ginkgo; the suite calls it from its
// Synchronized{Before,After}Suite.
package testenv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	draclient "k8s.io/dynamic-resource-allocation/client"

	"github.com/kep5018/adminaccess-conformance/clusters/kindcluster"
	"github.com/kep5018/adminaccess-conformance/clusters/nodesource"
	"github.com/kep5018/adminaccess-conformance/clusters/profile"
	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/timeline"
	"github.com/kep5018/adminaccess-conformance/testdriver/deploy"
)

// Shared is what process 1 hands to every parallel process.
type Shared struct {
	Release        string
	Profile        string
	Features       string
	ClusterName    string
	KubeconfigPath string
	Owned          bool // the suite created the cluster and may switch its gates
	Kind           bool // a kind cluster whose nodes the suite can reach
	Driver         deploy.Options
	// KubeContext is the context of KubeconfigPath every process's clients
	// use: the one given with an existing cluster's, "" (the current one)
	// for a kubeconfig the suite wrote.
	KubeContext string
	// Vendor is set when the run claims the devices of the user's own
	// driver; Driver then names that driver and class, and installs nothing.
	Vendor *VendorDriver
	// DriverWasThere: a run told to keep it had installed the bundled
	// driver before this one (a kept cluster); this run replaces it with its
	// own and leaves that in place.
	DriverWasThere bool
	ResourceAPI    string // served resource.k8s.io version
	ServerVersion  string
	// Components are the versions in force, for the report.
	Components map[string]string
	// NodeImage is the image the suite's cluster booted from, and
	// UpgradeBits where the next release's come from (resolved.Run's
	// Upgrade).
	NodeImage   string
	NodeImageID string // Docker's ID of NodeImage
	UpgradeBits string
	// NodeVersion is the Kubernetes version that booted ("1.35.8" from kind's
	// published image, "1.35.4" from the offline build; an existing
	// cluster's server version): the patch every version check expects.
	NodeVersion string
	// Timeline is what set-up spent its time on.
	Timeline []timeline.Step
}

// Env is one process's view of the cluster.
type Env struct {
	Shared
	Rel     release.Release
	Prof    profile.Profile
	Config  *rest.Config
	Client  kubernetes.Interface
	Dynamic dynamic.Interface
	DRA     *draclient.Client
	// Cluster is set when the cluster is a kind cluster of this machine.
	Cluster *kindcluster.Cluster
	// moved is the DRA feature set a spec group moved kube-scheduler to;
	// nil while it runs the release's defaults.
	moved *release.FeatureSet
}

// SetFeatureSet records that kube-scheduler now runs set (after
// kindcluster.MoveSchedulerTo); Features and Allocator follow it.
func (e *Env) SetFeatureSet(set release.FeatureSet) {
	if len(set.SchedulerGates) == 0 {
		e.moved = nil
		return
	}
	e.moved = &set
}

// Setup runs once per suite (process 1): make or reach the cluster, load and
// install the test driver. progress gets one line per step.
func (p *Plan) Setup(ctx context.Context, progress io.Writer) (Shared, error) {
	r, rel, prof := p.Run, p.Rel, p.Prof
	sh := Shared{Release: rel.Minor, Profile: prof.Name, Features: r.Features, ClusterName: r.Cluster.Name, UpgradeBits: r.Upgrade.Bits}
	var c *kindcluster.Cluster
	if r.Cluster.Kubeconfig != "" {
		sh.KubeconfigPath, sh.KubeContext = r.Cluster.Kubeconfig, r.Cluster.Context
		// A kind cluster of this machine with that name: its nodes can take images.
		if att, err := p.kind(r.Cluster.Name, rel, r.Cluster.Kubeconfig); err == nil {
			c, sh.Kind = att, true
		}
	} else {
		if err := kindcluster.CheckNameFree(r.Cluster.Name); err != nil {
			return sh, err
		}
		images, err := nodesource.New(r.Cluster.NodeImage, r.Layout.Output, r.Layout.Root, progress)
		if err != nil {
			return sh, fmt.Errorf("NODE_IMAGE: %w", err)
		}
		img, err := images.NodeImage(ctx, rel)
		if err != nil {
			return sh, err
		}
		sh.NodeImage, sh.NodeImageID, rel = img.Ref, img.ID, img.Release
		sh.NodeVersion = rel.Version
		fmt.Fprintf(progress, "node image %s runs Kubernetes %s\n", img.Ref, rel.GitVersion())
		t := time.Now()
		var registries []string
		if host := kindcluster.PlainHTTPRegistryHost(r.Driver.Image); host != "" {
			registries = append(registries, host)
		}
		c, err = kindcluster.Create(ctx, kindcluster.Options{Name: r.Cluster.Name, Release: rel, Profile: prof, Image: img.Ref,
			KubeconfigPath: filepath.Join(r.Layout.Output, "kubeconfig-"+r.Cluster.Name), Progress: progress, Keep: r.Cluster.Keep,
			PlainHTTPRegistries: registries})
		if err != nil {
			return sh, err
		}
		sh.KubeconfigPath, sh.Owned, sh.Kind = c.KubeconfigPath, true, true
		if err := p.adopt(c); err != nil {
			return sh, err
		}
		sh.Timeline = append(sh.Timeline, timeline.Since(timeline.KindSetup, "cluster create (kind, pod network, nodes and kube-system Ready)", t))
	}
	env, err := p.Connect(sh)
	if err != nil {
		return sh, err
	}
	if sh.ResourceAPI, err = deploy.ResourceVersion(env.Client); err != nil {
		return sh, err
	}
	if v, err := env.Client.Discovery().ServerVersion(); err == nil {
		sh.ServerVersion = v.GitVersion
	}
	if sh.NodeVersion == "" { // an existing cluster: what it runs
		if at, err := rel.AtPatch(sh.ServerVersion); err == nil {
			sh.NodeVersion = at.Version
		}
	}
	sh.Components = components(ctx, env.Client, sh.ServerVersion)
	if sh.NodeImage != "" {
		sh.Components["node image"] = sh.NodeImage
	}
	if c != nil {
		// A build that stood in for a module names it beside the image:
		// the sign-off must not read as one of binaries built without.
		if s := c.StandIns(); s != "" {
			sh.Components["node image built against"] = s
		}
	}

	if r.Vendor().Name != "" {
		return setupVendor(ctx, r, p.vendorDevices, sh, env, c, progress)
	}
	return setupBundled(ctx, r, sh, env, c, progress)
}

// components reads the versions the report names: the apiserver's, and each
// node's kubelet and container runtime.
func components(ctx context.Context, client kubernetes.Interface, server string) map[string]string {
	out := map[string]string{"kube-apiserver": server}
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return out
	}
	for _, n := range nodes.Items {
		out["kubelet on "+n.Name] = n.Status.NodeInfo.KubeletVersion
		out["runtime on "+n.Name] = n.Status.NodeInfo.ContainerRuntimeVersion
	}
	return out
}

// Connect builds the process's Env from what process 1 shared, on the
// plan's release (at the patch that booted) and its one client set.
func (p *Plan) Connect(sh Shared) (*Env, error) {
	rel := p.Rel
	if sh.NodeVersion != "" {
		var err error
		if rel, err = rel.AtPatch(sh.NodeVersion); err != nil {
			return nil, err
		}
	}
	if err := p.dial(sh.KubeconfigPath, sh.KubeContext); err != nil {
		return nil, err
	}
	cs := p.clients
	env := &Env{Shared: sh, Rel: rel, Prof: p.Prof, Config: cs.config, Client: cs.typed, Dynamic: cs.dynamic, DRA: cs.dra}
	if sh.Kind {
		// Setup found (or made) this kind cluster: not reaching it now is a
		// fault of the run, never a reason to skip what needs its nodes.
		c, err := p.kind(sh.ClusterName, rel, sh.KubeconfigPath)
		if err != nil {
			return nil, fmt.Errorf("attaching to kind cluster %s: %w", sh.ClusterName, err)
		}
		env.Cluster = c
	}
	return env, nil
}

// Encode and Decode carry Shared between Ginkgo processes.
func (s Shared) Encode() []byte { b, _ := json.Marshal(s); return b }

// Decode reads what Encode wrote.
func Decode(b []byte) (Shared, error) {
	var s Shared
	err := json.Unmarshal(b, &s)
	return s, err
}

// Mode is how this run reaches its cluster, as the release table's declared
// skips read it.
func (e *Env) Mode() release.Mode {
	return release.Mode{Existing: !e.Owned, NodeAccess: e.Cluster != nil, UpgradeImage: e.UpgradeBits != "", VendorDriver: e.Vendor != nil}
}

// Features is the DRA feature set kube-scheduler runs with under the
// cluster's profile: the release's defaults, or the set a group moved it
// to, with DRAAdminAccess as the profile sets it in kube-scheduler.
func (e *Env) Features() release.FeatureSet {
	set := e.Rel.DefaultFeatures()
	if e.moved != nil {
		set = *e.moved
	}
	var fs []release.Feature
	for _, f := range set.Features {
		if f != release.FeatureAdminAccess {
			fs = append(fs, f)
		}
	}
	if e.Prof.Effective(e.Rel, profile.Scheduler) {
		fs = append([]release.Feature{release.FeatureAdminAccess}, fs...)
	}
	set.Features = fs
	return set
}

// Allocator is the structured allocator's implementation kube-scheduler
// uses with Features, by the release table's rule; "unknown" where the
// table has no implementation for the set.
func (e *Env) Allocator() string {
	a, err := e.Rel.AllocatorFor(e.Features())
	if err != nil {
		return "unknown"
	}
	return a
}

// Teardown removes the driver and, for a cluster the suite made, deletes it
// unless keep is set. With failed set it first saves the cluster's logs.
func Teardown(ctx context.Context, env *Env, artifacts string, failed, keep bool, progress io.Writer) error {
	var errs []error
	sh := env.Shared
	if sh.Kind && (failed || keep) && env.Cluster != nil {
		dir := filepath.Join(artifacts, "kind-logs")
		// Best effort: kind also asks for crictl, which offline-built nodes
		// lack; everything else is collected, and a log gap must not fail a run.
		if err := kindcluster.ExportLogs(sh.ClusterName, dir); err != nil {
			fmt.Fprintf(progress, "warning: kind export logs: %v\n", err)
		}
		fmt.Fprintf(progress, "cluster logs saved in %s\n", dir)
	}
	if sh.Owned {
		if keep { // kept whole, driver included, for debugging
			fmt.Fprintf(progress, "kept cluster %s (KUBECONFIG=%s); delete it with: make cluster-down CLUSTER_NAME=%s\n", sh.ClusterName, sh.KubeconfigPath, sh.ClusterName)
		} else if err := kindcluster.Delete(sh.ClusterName); err != nil {
			errs = append(errs, err)
		}
		return errors.Join(errs...)
	}
	// Someone else's cluster: leave it as it was found. The specs'
	// namespaces go first, while the driver that unprepares their claims
	// still runs; a driver of the user's own was never installed by the run.
	if err := waitSpecNamespacesGone(ctx, env.Client, specNamespacesGoneTimeout); err != nil {
		errs = append(errs, err)
	}
	if !sh.DriverWasThere && sh.Vendor == nil {
		if err := deploy.Uninstall(ctx, env.Client, env.Dynamic, sh.Driver); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
