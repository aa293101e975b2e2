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
)

// Plan is what one process of a run works from: its flags resolved once
// (Resolve) into the release, the profile and the way the cluster is
// reached, and the process's one client set, made when the cluster first
// answers. Nothing below it resolves a flag again or dials anew: Setup,
// Connect and Teardown take the plan.
type Plan struct {
	Config
	// Rel is the release with the run's feature set folded in, at the
	// release table's patch (Connect moves it to the patch that booted).
	Rel  release.Release
	Prof profile.Profile
	// clients is the process's client set; nil until the cluster answers
	// (at Resolve for an existing cluster, after its creation for one the
	// suite makes, at Connect in the other processes).
	clients *clients
	// cluster is this process's handle on a kind cluster of this machine,
	// made once, on the same clients.
	cluster *kindcluster.Cluster
	// vendorDevices are the devices of a driver of the user's own that its
	// class selects, per node, as Resolve read them (Setup uses them).
	vendorDevices map[string][]Device
}

// clients is one client set: every client of a process is made from one
// configuration (kindcluster.ClientConfig's rate limits).
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

// dial makes the process's client set from a kubeconfig, where it has none.
func (p *Plan) dial(kubeconfig string) error {
	if p.clients != nil {
		return nil
	}
	config, err := kindcluster.ClientConfig(kubeconfig)
	if err != nil {
		return fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
	}
	p.clients, err = newClients(config, nil)
	return err
}

// adopt takes the clients of a cluster the suite just made as the
// process's.
func (p *Plan) adopt(c *kindcluster.Cluster) error {
	cs, err := newClients(c.Config, c.Client)
	if err != nil {
		return err
	}
	p.clients = cs
	return nil
}

// kind is the process's handle on the kind cluster name, attached once on
// the process's clients; rel is the release it runs, at the patch known
// by then (Connect knows the one that booted).
func (p *Plan) kind(name string, rel release.Release, kubeconfig string) (*kindcluster.Cluster, error) {
	if p.cluster == nil {
		c, err := kindcluster.AttachWith(name, rel, kubeconfig, p.clients.config, p.clients.typed)
		if err != nil {
			return nil, err
		}
		p.cluster = c
	}
	p.cluster.Release = rel
	return p.cluster, nil
}

// Resolve turns a process's flags into its plan and refuses bad input in
// one line: an unknown release, feature set or profile, a profile the
// release cannot run, a driver of the user's own named by halves; and for
// an existing cluster one that does not answer, serves no DRA or runs
// another release, or a driver of the user's own that publishes nothing
// its class selects, whose class selects devices sharing counters, or
// whose DRIVER_NAMESPACE holds no pod. The client set those checks use is
// the process's. Whether the class's devices are free is Setup's to check:
// every process resolves, and one that starts late could see the claims of
// specs another process already runs.
func Resolve(ctx context.Context, cfg Config) (*Plan, error) {
	rel, err := release.Resolve(cfg.Release, cfg.Features)
	if err != nil {
		return nil, err
	}
	prof, err := profile.Get(cfg.Profile)
	if err != nil {
		return nil, err
	}
	if err := CheckVendorArgs(cfg.Kubeconfig, cfg.Driver, cfg.DeviceClass, cfg.AdminCheck, cfg.WorkloadImage); err != nil {
		return nil, err
	}
	if err := CheckDriverNamespace(cfg.Driver, cfg.DriverNamespace); err != nil {
		return nil, err
	}
	p := &Plan{Config: cfg, Rel: rel, Prof: prof}
	if cfg.Kubeconfig == "" {
		if err := prof.CheckRunnable(rel); err != nil {
			return nil, err
		}
		return p, nil
	}
	if err := p.dial(cfg.Kubeconfig); err != nil {
		return nil, err
	}
	if err := answers(ctx, p.clients.typed, cfg.Kubeconfig); err != nil {
		return nil, err
	}
	if err := servesRelease(p.clients.typed, cfg.Kubeconfig, cfg.Release); err != nil {
		return nil, err
	}
	if cfg.Driver != "" {
		if p.vendorDevices, err = readVendorDriver(ctx, p.clients.dra, cfg.Driver, cfg.DeviceClass); err != nil {
			return nil, err
		}
		if err := checkDriverNamespace(ctx, p.clients.typed, cfg.Driver, cfg.DriverNamespace); err != nil {
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
