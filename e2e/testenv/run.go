package testenv

import "github.com/kep5018/adminaccess-conformance/e2e/resolved"

// FromRun is the suite's configuration of a resolved run (run.json): the
// fields it used to read from flags, each from the one value the runner
// (or the in-cluster entry) resolved.
func FromRun(r resolved.Run) Config {
	cfg := Config{
		Release: r.Given, Profile: r.Profile, Features: r.Features, ClusterName: r.Cluster.Name,
		Kubeconfig: r.Cluster.Kubeconfig, KubeContext: r.Cluster.Context, NodeImage: r.Cluster.NodeImage, KeepCluster: r.Cluster.Keep,
		TestdriverImage: r.Driver.Image, TestdriverArchive: r.Driver.Archive, TestdriverTag: r.Driver.Tag,
		RepoRoot: r.Layout.Root, OutputDir: r.Layout.Output, Artifacts: r.Layout.Artifacts,
		// Set only where the upgrade spec runs (resolved.New): the bits'
		// source, and the mode the release table reads (Env.Mode).
		UpgradeBits: r.Upgrade.Bits, UpgradeNodeImage: r.Upgrade.NodeImage,
	}
	if v := r.Driver.Vendor; v != nil {
		cfg.Driver, cfg.DeviceClass, cfg.AdminCheck, cfg.WorkloadImage, cfg.DriverNamespace = v.Name, v.DeviceClass, v.AdminCheck, v.WorkloadImage, v.Namespace
	}
	return cfg
}
