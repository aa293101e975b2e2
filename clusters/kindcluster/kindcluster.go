// SPDX-License-Identifier: Apache-2.0

// Package kindcluster creates, reaches, switches and deletes the suite's kind
// clusters. Create is a pipeline of named steps (clusters/pipeline), as
// kind's own create is: render the profile's config, let kind create the
// nodes, install the pod network, wait for every node and kube-system pod.
package kindcluster

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/cluster/nodeutils"
	kindcmd "sigs.k8s.io/kind/pkg/cmd"
	"sigs.k8s.io/kind/pkg/log"

	"github.com/kep5018/adminaccess-conformance/clusters/pipeline"
	"github.com/kep5018/adminaccess-conformance/clusters/profile"
	"github.com/kep5018/adminaccess-conformance/clusters/release"
)

// DefaultName is the cluster name used when none is given.
const DefaultName = "dra-e2e"

// Options says which cluster to create.
type Options struct {
	Name           string
	Release        release.Release
	Profile        profile.Profile
	Image          string
	KubeconfigPath string    // default: _output/kubeconfig-<name>
	Progress       io.Writer // one line per action
	// Keep leaves a cluster that failed to come up in place for debugging.
	Keep bool
	// PlainHTTPRegistries are registries the nodes pull from over plain
	// HTTP, on this machine's loopback ("localhost:5001", reached at the
	// kind network's gateway) or a private address (registry.go).
	PlainHTTPRegistries []string
}

// Cluster is a live kind cluster the suite made or attached to.
type Cluster struct {
	Name           string
	Release        release.Release
	KubeconfigPath string
	Config         *rest.Config
	Client         kubernetes.Interface
	// Progress gets a line for each step of a release switch or a restart
	// and each change in what a wait for a restarted component sees, so
	// that a slow switch or gate move says where its time went; nil
	// discards them. Create sets it to Options.Progress.
	Progress io.Writer
	// Moves, where set, hears of each restart and release switch as it
	// begins, and is called back as it ends (moves.go).
	Moves func(what string) (end func())
	// leftDown ends the moves of restarts that did not wait (moves.go).
	leftDown []func()
	provider *cluster.Provider
	// ways is the caller every restart goes through (restarter.go), with
	// what it learnt of this cluster: whether the fast restart fits it.
	ways *restarters
}

// elapsed is the time since t, to a tenth of a second, as progress lines
// give it.
func elapsed(t time.Time) time.Duration { return time.Since(t).Round(100 * time.Millisecond) }

// logf writes one progress line.
func (c *Cluster) logf(format string, args ...any) {
	if c.Progress != nil {
		fmt.Fprintf(c.Progress, "cluster %s: "+format+"\n", append([]any{c.Name}, args...)...)
	}
}

func newProvider() *cluster.Provider {
	return cluster.NewProvider(cluster.ProviderWithLogger(log.NoopLogger{}))
}

// CheckNameFree fails when a kind cluster of that name exists already.
func CheckNameFree(name string) error {
	existing, err := newProvider().List()
	if err != nil {
		return fmt.Errorf("listing kind clusters (is Docker running? run hack/docker-up.sh): %w", err)
	}
	if slices.Contains(existing, name) {
		return fmt.Errorf("a kind cluster named %q exists already: delete it (make cluster-down CLUSTER_NAME=%s) or choose another CLUSTER_NAME", name, name)
	}
	return nil
}

// Create makes the cluster and returns once every node is Ready and every
// kube-system pod runs. A cluster that fails half-way is deleted unless Keep.
func Create(ctx context.Context, o Options) (c *Cluster, err error) {
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.KubeconfigPath == "" {
		o.KubeconfigPath = filepath.Join("_output", "kubeconfig-"+o.Name)
	}
	if abs, err := filepath.Abs(o.KubeconfigPath); err == nil {
		o.KubeconfigPath = abs
	}
	cfg, err := profile.Render(o.Release, o.Profile, o.Name, o.Image)
	if err != nil {
		return nil, err
	}
	if len(o.PlainHTTPRegistries) > 0 {
		cfg.ContainerdConfigPatches = append(cfg.ContainerdConfigPatches, registryConfigPath)
	}
	raw, err := profile.YAML(cfg)
	if err != nil {
		return nil, err
	}
	if err := CheckNameFree(o.Name); err != nil {
		return nil, err
	}
	// kind's own step log ("Preparing nodes", "Starting control-plane") goes
	// to stderr as kind prints it, so a slow create shows where it is.
	provider := cluster.NewProvider(cluster.ProviderWithLogger(kindcmd.NewLogger()))
	c = &Cluster{Name: o.Name, Release: o.Release, KubeconfigPath: o.KubeconfigPath, Progress: o.Progress, provider: provider}
	created := false
	defer func() {
		// provider, not c: a failed step returns a nil cluster.
		if err != nil && created && !o.Keep {
			fmt.Fprintf(o.Progress, "cluster %s: deleting it after the failure (KEEP_CLUSTER=1 keeps it)\n", o.Name)
			provider.Delete(o.Name, "")
		}
	}()
	// Each step gets the create's context; the loop checks it between them.
	withCtx := func(run func(context.Context, *Cluster) error) func(*Cluster) error {
		return func(c *Cluster) error { return run(ctx, c) }
	}
	steps := []pipeline.Step[*Cluster]{
		{Name: "kind create", Run: func(c *Cluster) error {
			created = true
			err := c.provider.Create(o.Name,
				cluster.CreateWithRawConfig(raw),
				cluster.CreateWithKubeconfigPath(o.KubeconfigPath),
				cluster.CreateWithDisplayUsage(false),
				cluster.CreateWithDisplaySalutation(false))
			// A failed kubeadm init's output goes beside the kubeconfig, the
			// one folder this create writes to (the run's output folder for
			// the suite and for e2e-cluster's default), since kind's error
			// drops it (createoutput.go).
			return keepRunOutput(err, filepath.Dir(o.KubeconfigPath), "kind-create-"+o.Name+".log")
		}},
		{Name: "client", Run: (*Cluster).connect},
		{Name: "plain-HTTP registries", Run: func(c *Cluster) error {
			return c.pointAtPlainHTTPRegistries(o.PlainHTTPRegistries)
		}},
		{Name: "pod network", Run: withCtx(installPodNetwork)},
		{Name: "nodes ready", Run: withCtx(waitNodesReady)},
		{Name: "system pods running", Run: withCtx(waitSystemPods)},
	}
	start := time.Now()
	if err := pipeline.Run(c, steps, pipeline.Hooks{Ctx: ctx, Done: func(name string, took time.Duration) {
		fmt.Fprintf(o.Progress, "cluster %s: %-20s done in %s\n", o.Name, name, took.Round(100*time.Millisecond))
	}}); err != nil {
		return nil, fmt.Errorf("cluster %s, %w", o.Name, err)
	}
	fmt.Fprintf(o.Progress, "cluster %s: up in %s (Kubernetes %s, profile %s)\n", o.Name, time.Since(start).Round(time.Second), o.Release.Version, o.Profile.Name)
	return c, nil
}

// Attach reaches an existing kind cluster of this suite by name.
func Attach(name string, r release.Release, kubeconfigPath string) (*Cluster, error) {
	p, err := providerOf(name)
	if err != nil {
		return nil, err
	}
	if kubeconfigPath == "" {
		kubeconfigPath = filepath.Join("_output", "kubeconfig-"+name)
		kc, err := p.KubeConfig(name, false)
		if err != nil {
			return nil, err
		}
		if err := os.MkdirAll(filepath.Dir(kubeconfigPath), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(kubeconfigPath, []byte(kc), 0o600); err != nil {
			return nil, err
		}
	}
	c := &Cluster{Name: name, Release: r, KubeconfigPath: kubeconfigPath, provider: p}
	return c, c.connect()
}

// AttachWith is Attach on clients the caller already has for the cluster
// (one client set per process, see e2e/testenv.Plan).
func AttachWith(name string, r release.Release, kubeconfigPath string, config *rest.Config, client kubernetes.Interface) (*Cluster, error) {
	p, err := providerOf(name)
	if err != nil {
		return nil, err
	}
	return &Cluster{Name: name, Release: r, KubeconfigPath: kubeconfigPath, Config: config, Client: client, provider: p}, nil
}

// providerOf is a kind provider that knows a cluster called name.
func providerOf(name string) (*cluster.Provider, error) {
	p := newProvider()
	existing, err := p.List()
	if err != nil {
		return nil, err
	}
	if !slices.Contains(existing, name) {
		return nil, fmt.Errorf("no kind cluster named %q (have: %v)", name, existing)
	}
	return p, nil
}

// ClientConfig is the client configuration of kubeconfig that the suite's
// clients use, for its context kubeContext ("" for its current context: a
// kubeconfig the suite wrote has one only): they may send 50 requests a
// second (burst 100). client-go's
// default of 5 (burst 10) held them back: the authorization sweep's 216
// denied creates took 27 s, and a restart is watched with two requests
// every pollInterval (8 a second). The suite is its cluster's only heavy
// client; the e2e framework's own clients allow 20 (burst 50).
func ClientConfig(kubeconfig, kubeContext string) (*rest.Config, error) {
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: kubeContext}).ClientConfig()
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 50, 100
	return cfg, nil
}

func (c *Cluster) connect() error {
	cfg, err := ClientConfig(c.KubeconfigPath, "")
	if err != nil {
		return err
	}
	c.Config = cfg
	c.Client, err = kubernetes.NewForConfig(cfg)
	return err
}

// Nodes lists the cluster's node containers.
func (c *Cluster) Nodes() ([]nodes.Node, error) { return c.provider.ListNodes(c.Name) }

// ControlPlane is the control-plane node container.
func (c *Cluster) ControlPlane() (nodes.Node, error) {
	all, err := c.Nodes()
	if err != nil {
		return nil, err
	}
	for _, n := range all {
		if role, _ := n.Role(); role == "control-plane" {
			return n, nil
		}
	}
	return nil, fmt.Errorf("cluster %s has no control-plane node", c.Name)
}

// APIServerAddress is where pods reach kube-apiserver on the control-plane
// node's own address, which holdClients holds during a restart (the
// kubernetes Service does not: see deploy.Options.APIServerHost). The
// serving certificate kubeadm made names that address.
func (c *Cluster) APIServerAddress() (host, port string, err error) {
	cp, err := c.ControlPlane()
	if err != nil {
		return "", "", err
	}
	ipv4, _, err := cp.IP()
	if err != nil {
		return "", "", fmt.Errorf("the address of %s: %w", cp, err)
	}
	if ipv4 == "" {
		return "", "", fmt.Errorf("%s has no IPv4 address", cp)
	}
	return ipv4, apiServerPort, nil
}

// LoadImageArchive imports an image archive into containerd on the given
// nodes, or on every node when none is given.
func (c *Cluster) LoadImageArchive(archive string, onto ...nodes.Node) error {
	if len(onto) == 0 {
		all, err := c.Nodes()
		if err != nil {
			return err
		}
		onto = all
	}
	for _, n := range onto {
		f, err := os.Open(archive)
		if err != nil {
			return err
		}
		err = nodeutils.LoadImageArchive(n, f)
		f.Close()
		if err != nil {
			return fmt.Errorf("loading %s into %s: %w", archive, n, err)
		}
	}
	return nil
}

// Delete removes a kind cluster; deleting one that does not exist is no error.
func Delete(name string) error {
	return newProvider().Delete(name, "")
}

// Delete removes this cluster.
func (c *Cluster) Delete() error { return c.provider.Delete(c.Name, "") }

// ExportLogs writes `kind export logs` output for the cluster into dir.
func ExportLogs(name, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return newProvider().CollectLogs(name, dir)
}
