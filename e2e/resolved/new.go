package resolved

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/labels"
)

// Inputs are what New resolves a run from: the variables' values for one
// release, column and class, as strings, and what the steps before the
// suite built for it.
type Inputs struct {
	// Given is K8S_VERSION (a minor or a patch), Profile and Features
	// PROFILE and FEATURES.
	Given, Profile, Features string
	// ClusterName is the cluster's name; Kubeconfig (absolute) and
	// KubeContext an existing cluster's, empty where the suite makes it;
	// NodeImage the node image the suite's cluster boots from, or its
	// source; Keep KEEP_CLUSTER=1.
	ClusterName, Kubeconfig, KubeContext, NodeImage string
	Keep                                            bool
	// DriverImage is TESTDRIVER_IMAGE; DriverArchive and DriverTag the
	// bundled driver's image the runner built.
	DriverImage, DriverArchive, DriverTag string
	// Driver, DeviceClass, AdminCheck, WorkloadImage and DriverNamespace
	// are a driver of the user's own (DRIVER ...); all empty for the
	// bundled one.
	Driver, DeviceClass, AdminCheck, WorkloadImage, DriverNamespace string
	// Labels, Focus and Skip are the Ginkgo filters (LABELS, FOCUS, SKIP).
	Labels, Focus, Skip string
	// Upgrade is UPGRADE's value: "0" gives the upgrade spec no next
	// release. UpgradeBits is the status file the runner's getter of the
	// next release's bits writes, UpgradeNodeImage a node image of that
	// release: where the upgrade spec runs, one of them is where its bits
	// come from; with neither, it is a declared skip.
	Upgrade, UpgradeBits, UpgradeNodeImage string
	// Root is the repository, Output its build folder, Artifacts the
	// release's reports folder (relative ones are taken from Root),
	// Timeline the runner's timed steps ("" none).
	Root, Output, Artifacts, Timeline string
}

// New resolves one release's run: the release once (at the table's patch,
// with the feature set and its allocator), and whether the upgrade spec
// runs, decided once (UpgradeFor) with the filters' selection of it
// (labels.UpgradeSelected). Bad input is refused in one line.
func New(in Inputs) (Run, error) {
	rel, err := release.Resolve(in.Given, in.Features)
	if err != nil {
		return Run{}, err
	}
	if strings.TrimSpace(in.Profile) == "" {
		return Run{}, fmt.Errorf("no gate profile: give PROFILE (default: default)")
	}
	allocator, err := rel.AllocatorFor(rel.DefaultFeatures())
	if err != nil {
		return Run{}, err
	}
	selected, err := labels.UpgradeSelected(in.Labels, rel)
	if err != nil {
		return Run{}, err
	}
	root := in.Root
	if abs, err := filepath.Abs(root); err == nil && root != "" {
		root = abs
	}
	path := func(p string) string {
		if p == "" || filepath.IsAbs(p) || root == "" {
			return p
		}
		return filepath.Join(root, p)
	}
	features := in.Features
	if features == "" {
		features = release.DefaultSet
	}
	r := Run{
		Schema: Schema, Given: in.Given, Release: rel.Version, Minor: rel.Minor, Profile: in.Profile, Features: features, Allocator: allocator,
		Cluster: Cluster{Name: in.ClusterName, Kubeconfig: path(in.Kubeconfig), Context: in.KubeContext, NodeImage: in.NodeImage, Keep: in.Keep},
		Driver:  Driver{Image: in.DriverImage, Archive: in.DriverArchive, Tag: in.DriverTag},
		Filters: Filters{Labels: in.Labels, Focus: in.Focus, Skip: in.Skip},
		Layout:  Layout{Root: root, Output: path(in.Output), Artifacts: path(in.Artifacts), Timeline: in.Timeline},
	}
	if in.Driver != "" || in.DeviceClass != "" {
		r.Driver.Vendor = &Vendor{Name: in.Driver, DeviceClass: in.DeviceClass, AdminCheck: in.AdminCheck, WorkloadImage: in.WorkloadImage, Namespace: in.DriverNamespace}
	}
	// The release table's mode as the suite reads it (the rows of release
	// switching read only these two): an existing cluster, and whether
	// the next release's bits or node image come at all.
	m := release.Mode{Existing: r.Cluster.Existing(), VendorDriver: r.Driver.Vendor != nil,
		UpgradeImage: in.Upgrade != "0" && (in.UpgradeBits != "" || in.UpgradeNodeImage != "")}
	r.Upgrade = UpgradeFor(rel, m, selected)
	if r.Upgrade.Runs {
		r.Upgrade.Bits, r.Upgrade.NodeImage = path(in.UpgradeBits), in.UpgradeNodeImage
	}
	if err := r.check(); err != nil {
		return Run{}, err
	}
	return r, nil
}
