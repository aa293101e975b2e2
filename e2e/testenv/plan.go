// SPDX-License-Identifier: Apache-2.0

package testenv

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	draclient "k8s.io/dynamic-resource-allocation/client"

	"github.com/kep5018/adminaccess-conformance/clusters/kindcluster"
	"github.com/kep5018/adminaccess-conformance/clusters/profile"
	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/resolved"
)

// Plan is what one process of a run works from: the resolved run
// (run.json) with the release's row, the profile and the way the cluster
// is reached, and the process's one client set, made when the cluster
// first answers. Nothing below it looks the run up again or dials anew:
// Setup, Connect and Teardown take the plan.
//
// A Plan does not change after Resolve: no field is assigned again, and
// what depends on the cluster that booted (the release at its patch, a
// kind handle) is made where it is used (Connect, kind) rather than
// written back into the plan, so nothing handed out earlier changes under
// its holder. The one thing made later is the client set the plan points
// to, filled once when the cluster first answers and never replaced.
type Plan struct {
	// Run is the resolved run the plan is of, read as the runner (or the
	// in-cluster entry) wrote it: nothing copies its fields out.
	Run resolved.Run
	// Rel is the release with the run's feature set folded in, at the
	// release table's patch (Connect's Env has it at the patch that booted).
	Rel  release.Release
	Prof profile.Profile
	// clients is the process's client set, empty until the cluster answers
	// (at Resolve for an existing cluster, after its creation for one the
	// suite makes, at Connect in the other processes).
	clients *clients
	// vendorDevices are the devices of a driver of the user's own that its
	// class selects, per node, as Resolve read them (Setup uses them).
	vendorDevices map[string][]Device
}

// clients is one client set: every client of a process is made from one
// configuration (kindcluster.ClientConfig's rate limits). The zero value is
// the set of a process whose cluster has not answered yet.
type clients struct {
	config  *rest.Config
	typed   kubernetes.Interface
	dynamic dynamic.Interface
	dra     *draclient.Client
}

func newClients(config *rest.Config, typed kubernetes.Interface) (*clients, error) {
	var err error
	if typed == nil {
		if typed, err = kubernetes.NewForConfig(config); err != nil {
			return nil, err
		}
	}
	dyn, err := dynamic.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	return &clients{config: config, typed: typed, dynamic: dyn, dra: draclient.New(typed)}, nil
}

// dial makes the process's client set from a kubeconfig's context (""
// its current one), where it has none.
func (p *Plan) dial(kubeconfig, kubeContext string) error {
	if p.clients.typed != nil {
		return nil
	}
	config, err := kindcluster.ClientConfig(kubeconfig, kubeContext)
	if err != nil {
		return fmt.Errorf("kubeconfig %s: %w", KubeconfigName(kubeconfig, kubeContext), err)
	}
	cs, err := newClients(config, nil)
	if err != nil {
		return err
	}
	*p.clients = *cs
	return nil
}

// adopt takes the clients of a cluster the suite just made as the
// process's: it has none yet, since no kubeconfig named a cluster.
func (p *Plan) adopt(c *kindcluster.Cluster) error {
	if p.clients.typed != nil {
		return fmt.Errorf("cluster %s: the process has a client set already", c.Name)
	}
	cs, err := newClients(c.Config, c.Client)
	if err != nil {
		return err
	}
	*p.clients = *cs
	return nil
}

// kind attaches a handle on the kind cluster name for release rel (at the
// patch its caller knows: the table's in Setup, the one that booted in
// Connect), on the process's clients. Each call makes a handle of its own
// and keeps none: the handle Connect gives the specs is never one that
// Setup holds, and no caller's release is overwritten by another's.
func (p *Plan) kind(name string, rel release.Release, kubeconfig string) (*kindcluster.Cluster, error) {
	return kindcluster.AttachWith(name, rel, kubeconfig, p.clients.config, p.clients.typed)
}

// Resolve turns a process's resolved run into its plan and refuses bad
// input in one line: an unknown profile, a profile the
// release cannot run, a driver of the user's own named by halves; and for
// an existing cluster one that does not answer, serves no DRA or runs
// another release, or a driver of the user's own that publishes nothing
// its class selects, whose class selects devices sharing counters, or
// whose DRIVER_NAMESPACE holds no pod. The client set those checks use is
// the process's. Whether the class's devices are free is Setup's to check:
// every process resolves, and one that starts late could see the claims of
// specs another process already runs.
func Resolve(ctx context.Context, r resolved.Run) (*Plan, error) {
	// The runner resolved the release: this looks its row up, and parses
	// nothing the user gave again.
	rel, err := r.Rel()
	if err != nil {
		return nil, err
	}
	prof, err := profile.Get(r.Profile)
	if err != nil {
		return nil, err
	}
	own := r.Vendor()
	if err := CheckVendorArgs(r.Cluster.Kubeconfig, own.Name, own.DeviceClass, own.AdminCheck, own.WorkloadImage); err != nil {
		return nil, err
	}
	if err := CheckDriverNamespace(own.Name, own.Namespace); err != nil {
		return nil, err
	}
	p := &Plan{Run: r, Rel: rel, Prof: prof, clients: &clients{}}
	if r.Cluster.Context != "" && r.Cluster.Kubeconfig == "" {
		return nil, fmt.Errorf("KUBECONTEXT=%s names a context of a kubeconfig: give KUBECONFIG too", r.Cluster.Context)
	}
	if r.Cluster.Kubeconfig == "" {
		if err := prof.CheckRunnable(rel); err != nil {
			return nil, err
		}
		return p, nil
	}
	if err := p.dial(r.Cluster.Kubeconfig, r.Cluster.Context); err != nil {
		return nil, err
	}
	kubeconfig := KubeconfigName(r.Cluster.Kubeconfig, r.Cluster.Context)
	if err := answers(ctx, p.clients.typed, kubeconfig); err != nil {
		return nil, err
	}
	// The release as given (a patch only where one was), on the row the
	// run resolved.
	if err := serves(p.clients.typed, kubeconfig, func(v string) error { return rowMatches(rel, r.Given, v) }); err != nil {
		return nil, err
	}
	if own.Name != "" {
		if p.vendorDevices, err = readVendorDriver(ctx, p.clients.dra, own.Name, own.DeviceClass); err != nil {
			return nil, err
		}
		if err := checkDriverNamespace(ctx, p.clients.typed, own.Name, own.Namespace); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// answers fails fast, in one line, on a cluster that does not answer.
func answers(ctx context.Context, client kubernetes.Interface, kubeconfig string) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if _, err := client.CoreV1().Namespaces().Get(ctx, metav1.NamespaceDefault, metav1.GetOptions{}); err != nil {
		return fmt.Errorf("the cluster of kubeconfig %s does not answer: %w", kubeconfig, err)
	}
	return nil
}
