// SPDX-License-Identifier: Apache-2.0

package testenv

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kep5018/adminaccess-conformance/clusters/kindcluster"
	"github.com/kep5018/adminaccess-conformance/e2e/resolved"
	"github.com/kep5018/adminaccess-conformance/e2e/timeline"
	"github.com/kep5018/adminaccess-conformance/testdriver/contract"
	"github.com/kep5018/adminaccess-conformance/testdriver/deploy"
	"github.com/kep5018/adminaccess-conformance/testdriver/image"
)

// The bundled test driver: its image where the nodes get it, its install
// with the run's label, and the feature drivers' second instances.

// setupBundled is Setup's end with the bundled driver: its image on the
// nodes, a stale or kept one out of the way, this run's installed.
func setupBundled(ctx context.Context, r resolved.Run, sh Shared, env *Env, c *kindcluster.Cluster, progress io.Writer) (Shared, error) {
	built, err := driverImage(r, c, &sh, progress)
	if err != nil {
		return sh, err
	}
	// Off the control plane on a cluster the suite did not create (see
	// deploy.Options.WorkersOnly).
	// With spare pools, for the specs that need every device of a node to
	// themselves (contract.Slots).
	sh.Driver = deploy.Options{Image: built.Tag, WorkersOnly: !sh.Owned, Slots: contract.Slots}.Defaults()
	if c != nil {
		if sh.Driver.APIServerHost, sh.Driver.APIServerPort, err = c.APIServerAddress(); err != nil {
			return sh, err
		}
	}
	if sh.DriverWasThere, err = clearDriverPlace(ctx, env, sh.Driver, progress); err != nil {
		return sh, err
	}
	sh.Driver.RunID = fmt.Sprintf("%s-%d", r.Cluster.Name, time.Now().Unix())
	sh.Driver.Kept = r.Cluster.Keep || sh.DriverWasThere
	t := time.Now()
	if err := deploy.Install(ctx, env.Client, env.Dynamic, sh.Driver); err != nil {
		return sh, err
	}
	where := "every node"
	if sh.Driver.WorkersOnly {
		where = "every node but the control plane's"
	}
	fmt.Fprintf(progress, "testdriver: %d devices and %d spare pools of as many published on %s in %s\n", sh.Driver.Devices, sh.Driver.Slots, where, time.Since(t).Round(100*time.Millisecond))
	sh.Timeline = append(sh.Timeline, timeline.Since(timeline.KindSetup, "test driver install (devices published)", t))
	return sh, nil
}

// driverImage is the bundled driver and workload image where the nodes get
// it: pulled from a registry (TESTDRIVER_IMAGE), or an archive (given, or
// built here) loaded into a kind cluster of this machine.
func driverImage(r resolved.Run, c *kindcluster.Cluster, sh *Shared, progress io.Writer) (image.Built, error) {
	built := image.Built{Archive: r.Driver.Archive, Tag: r.Driver.Tag}
	var err error
	if r.Driver.Image != "" {
		// From a registry: every node pulls it when a pod first needs it.
		built = image.Built{Tag: r.Driver.Image}
		fmt.Fprintf(progress, "testdriver: image %s, pulled by the nodes from its registry\n", built.Tag)
	} else if built.Archive == "" {
		t := time.Now()
		if built, err = image.Build(r.Layout.Root, filepath.Join(r.Layout.Output, "testdriver")); err != nil {
			return built, err
		}
		fmt.Fprintf(progress, "testdriver: image %s built in %s\n", built.Tag, time.Since(t).Round(100*time.Millisecond))
		sh.Timeline = append(sh.Timeline, timeline.Since(timeline.KindSetup, "test driver image build", t))
	}
	if c != nil && built.Archive != "" {
		t := time.Now()
		if err := c.LoadImageArchive(built.Archive); err != nil {
			return built, err
		}
		sh.Timeline = append(sh.Timeline, timeline.Since(timeline.KindSetup, "test driver image load", t))
	}
	return built, nil
}

// clearDriverPlace makes way for this run's driver by what is at its place:
// nothing; a driver a run left when it was killed (removed); one a run was
// told to keep (removed, and kept says this run's is kept in its stead); or
// a namespace of that name the suite did not make (refused). A stale driver
// is thus never taken for one kept on purpose, nor left running an old image.
func clearDriverPlace(ctx context.Context, env *Env, driver deploy.Options, progress io.Writer) (kept bool, err error) {
	ns, err := env.Client.CoreV1().Namespaces().Get(ctx, driver.Namespace, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return false, fmt.Errorf("reading namespace %s: %w", driver.Namespace, err)
	}
	var labels map[string]string
	if err == nil {
		labels = ns.Labels
	}
	switch deploy.Existing(labels, err == nil) {
	case deploy.NotOurs:
		return false, fmt.Errorf("namespace %s exists and was not made by this suite (it lacks app.kubernetes.io/managed-by=%s): the bundled driver installs there; remove it or run against another cluster", driver.Namespace, deploy.ManagedBy)
	case deploy.Stale:
		fmt.Fprintf(progress, "testdriver: removing the driver run %q installed and did not remove (interrupted)\n", labels[deploy.RunLabel])
		return false, deploy.Uninstall(ctx, env.Client, env.Dynamic, driver)
	case deploy.Kept:
		// A feature driver (its own namespace, whatever its layout: the
		// extended group's is plain) is never kept on purpose.
		if driver.Namespace != env.Driver.Namespace {
			fmt.Fprintf(progress, "testdriver: removing the %s driver run %q left\n", driver.Layout, labels[deploy.RunLabel])
			return false, deploy.Uninstall(ctx, env.Client, env.Dynamic, driver)
		}
		fmt.Fprintf(progress, "testdriver: replacing the driver run %q kept with this run's, which stays installed at the end, as found\n", labels[deploy.RunLabel])
		return true, deploy.Uninstall(ctx, env.Client, env.Dynamic, driver)
	}
	return false, nil
}

// FeatureDriver is a second instance of the bundled driver that publishes
// the layout a feature's specs need, under a name and class of its own, so
// the suite's own driver and every other spec see the devices they always
// did. It reaches kube-apiserver as the suite's driver does.
func (e *Env) FeatureDriver(layout contract.Layout) deploy.Options {
	return e.FeatureDriverFor(layout, "")
}

// FeatureDriverFor is FeatureDriver for owner (an allocator scheduler's
// specs, which run beside the feature group's own instance of the layout):
// a namespace, driver name and class of its own again, so neither
// instance's claims take the other's devices. owner "" is the feature
// group's instance.
func (e *Env) FeatureDriverFor(layout contract.Layout, owner string) deploy.Options {
	ns, name := e.Driver.Namespace+"-"+string(layout), string(layout)+"."+contract.DriverName
	if owner != "" {
		ns += "-" + owner
		name = contract.InstanceDriverName(string(layout), owner)
	}
	return deploy.Options{
		Namespace: ns, Image: e.Driver.Image,
		DriverName: name, Layout: layout,
		// The counter shape the release's kube-apiserver takes: in the
		// other one, a partitionable instance never publishes a device.
		CountersWithDevices: layout == contract.LayoutPartitionable && e.Rel.CountersWithDevices,
		APIServerHost:       e.Driver.APIServerHost, APIServerPort: e.Driver.APIServerPort,
		// Labelled with the run as the suite's own driver is, and never
		// kept: its group removes it, so one found later is a killed run's.
		RunID: e.Driver.RunID, WorkersOnly: e.Driver.WorkersOnly,
	}.Defaults()
}

// ClearFeatureDriverPlace makes way for a feature driver: one a killed run
// left (a feature driver is never kept, so any of the suite's is stale) is
// removed; a namespace of that name the suite did not make is refused.
func (e *Env) ClearFeatureDriverPlace(ctx context.Context, driver deploy.Options, progress io.Writer) error {
	_, err := clearDriverPlace(ctx, e, driver, progress)
	return err
}
