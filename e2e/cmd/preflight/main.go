// Command preflight checks every argument a `make e2e` run will read, before
// anything is installed or built: the releases, the profile and its fit with
// each release, the label filter, the focus and skip expressions, the node
// image sources, the cluster name (and whether it is in use), and an existing
// cluster's kubeconfig. Each bad value gets one line naming it and what is
// accepted; the exit code is 2.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/kep5018/adminaccess-conformance/clusters/kindcluster"
	"github.com/kep5018/adminaccess-conformance/clusters/nodesource"
	"github.com/kep5018/adminaccess-conformance/clusters/profile"
	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/labels"
	"github.com/kep5018/adminaccess-conformance/e2e/testenv"
	"github.com/kep5018/adminaccess-conformance/testdriver/push"
)

func main() {
	a := args{}
	fs := flag.NewFlagSet("preflight", flag.ExitOnError)
	fs.StringVar(&a.releases, "releases", release.Default, "K8S_VERSIONS: releases, separated by spaces")
	fs.StringVar(&a.profile, "profile", "default", "PROFILE")
	fs.StringVar(&a.features, "features", release.DefaultSet, "FEATURES: the cluster's DRA feature set")
	fs.StringVar(&a.testdriverImage, "testdriver-image", "", "TESTDRIVER_IMAGE: a pushed test driver image")
	fs.StringVar(&a.labels, "labels", "", "LABELS: a Ginkgo label filter")
	fs.StringVar(&a.focus, "focus", "", "FOCUS: a regular expression")
	fs.StringVar(&a.skip, "skip", "", "SKIP: a regular expression")
	fs.StringVar(&a.nodeImage, "node-image", "auto", "NODE_IMAGE")
	fs.StringVar(&a.upgradeImage, "upgrade-node-image", "auto", "UPGRADE_NODE_IMAGE")
	fs.StringVar(&a.clusterName, "cluster-name", kindcluster.DefaultName, "CLUSTER_NAME")
	fs.StringVar(&a.kubeconfig, "kubeconfig", "", "KUBECONFIG given on the make command line: an existing cluster")
	fs.StringVar(&a.keepCluster, "keep-cluster", "", "KEEP_CLUSTER: 1 keeps the cluster, 0 or empty deletes it")
	fs.StringVar(&a.upgrade, "upgrade", "1", "UPGRADE: 1 or 0")
	fs.StringVar(&a.timeout, "timeout", "60m", "TIMEOUT: Ginkgo's suite timeout per release, a Go duration")
	fs.StringVar(&a.procs, "procs", "2", "PROCS: parallel Ginkgo processes, a whole number from 1")
	fs.StringVar(&a.driver, "driver", "", "DRIVER: a DRA driver of your own on the existing cluster")
	fs.StringVar(&a.deviceClass, "device-class", "", "DEVICE_CLASS: the DeviceClass that selects its devices")
	fs.StringVar(&a.adminCheck, "admin-check", "", "ADMIN_CHECK: a command run in containers given admin access")
	fs.StringVar(&a.workloadImage, "workload-image", "", "WORKLOAD_IMAGE: the image of the specs' pods")
	fs.StringVar(&a.driverNamespace, "driver-namespace", "", "DRIVER_NAMESPACE: where that driver's pods run (default: found by their kubelet plugin folder)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: preflight [flags]   (make e2e runs it with the make variables)")
		fs.PrintDefaults()
	}
	fs.Parse(os.Args[1:])
	problems := a.check(context.Background())
	for _, p := range problems {
		fmt.Fprintln(os.Stderr, "e2e:", p)
	}
	if len(problems) > 0 {
		os.Exit(2)
	}
}

type args struct {
	releases, profile, features, labels, focus, skip, nodeImage, upgradeImage, clusterName, kubeconfig    string
	keepCluster, upgrade, timeout, procs, testdriverImage, driver, deviceClass, adminCheck, workloadImage string
	// driverNamespace is DRIVER_NAMESPACE, where a driver of the user's own runs.
	driverNamespace string
}

// clusterNames are the clusters the run will create: CLUSTER_NAME, or with
// KEEP_CLUSTER=1 and several releases one per release, CLUSTER_NAME-1-35
// and so on (the Makefile's e2e target names them the same way), so that
// each kept cluster has a name of its own.
func (a args) clusterNames() []string {
	rels := strings.Fields(a.releases)
	if a.keepCluster != "1" || len(rels) < 2 {
		return []string{a.clusterName}
	}
	out := make([]string, len(rels))
	for i, r := range rels {
		out[i] = a.clusterName + "-" + strings.ReplaceAll(r, ".", "-")
	}
	return out
}

var kindName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// check returns one line per bad argument.
func (a args) check(ctx context.Context) []string {
	out := a.checkArgs()
	if a.testdriverImage != "" {
		// Before anything is built: a reference that does not resolve, or a
		// registry that does not answer, fails here in one line.
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		_, err := push.Resolve(ctx, a.testdriverImage)
		cancel()
		if err != nil {
			out = append(out, "TESTDRIVER_IMAGE: "+err.Error())
		}
	}
	if a.kubeconfig != "" {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := testenv.Preflight(ctx, a.kubeconfig, strings.Fields(a.releases)...); err != nil {
			out = append(out, err.Error())
		} else if testenv.CheckVendorArgs(a.kubeconfig, a.driver, a.deviceClass, a.adminCheck, a.workloadImage) != nil ||
			testenv.CheckDriverNamespace(a.driver, a.driverNamespace) != nil {
			// Already said by checkArgs; the cluster is not asked about names that are wrong anyway.
		} else {
			// DEVICE_CLASS=a,b: each class is a column of its own, and each
			// must hold on its own.
			for _, class := range strings.Split(a.deviceClass, ",") {
				if err := testenv.PreflightVendorDriver(ctx, a.kubeconfig, a.driver, strings.TrimSpace(class), a.driverNamespace); err != nil {
					out = append(out, err.Error())
				}
			}
		}
	} else if dockerAnswers(ctx) {
		// Without a Docker engine no kind cluster can exist, so the name is free.
		for _, name := range a.clusterNames() {
			if err := kindcluster.CheckNameFree(name); err != nil {
				out = append(out, err.Error())
			}
		}
	}
	return out
}

// checkArgs checks what needs no cluster and no Docker.
func (a args) checkArgs() []string {
	var out []string
	if err := testenv.CheckVendorArgs(a.kubeconfig, a.driver, a.deviceClass, a.adminCheck, a.workloadImage); err != nil {
		out = append(out, err.Error())
	}
	if err := testenv.CheckDriverNamespace(a.driver, a.driverNamespace); err != nil {
		out = append(out, err.Error())
	}
	var rels []release.Release
	if len(strings.Fields(a.releases)) == 0 {
		out = append(out, fmt.Sprintf("no release given: K8S_VERSION(S) takes %s", strings.Join(release.Minors(), ", ")))
	}
	for _, name := range strings.Fields(a.releases) {
		r, err := release.Get(name)
		if err != nil {
			out = append(out, err.Error())
			continue
		}
		if _, err := r.WithFeatures(a.features); err != nil {
			out = append(out, err.Error())
		}
		rels = append(rels, r)
	}
	prof, err := profile.Get(a.profile)
	if err != nil {
		out = append(out, err.Error())
	} else if a.kubeconfig == "" {
		for _, r := range rels {
			if err := prof.CheckRunnable(r); err != nil {
				out = append(out, err.Error())
			}
		}
	}
	if err := labels.Check(a.labels); err != nil {
		out = append(out, err.Error())
	}
	for what, expr := range map[string]string{"FOCUS": a.focus, "SKIP": a.skip} {
		if _, err := regexp.Compile(expr); err != nil {
			out = append(out, fmt.Sprintf("%s %q is not a regular expression: %v", what, expr, err))
		}
	}
	for what, src := range map[string]string{"NODE_IMAGE": a.nodeImage, "UPGRADE_NODE_IMAGE": a.upgradeImage} {
		if err := nodesource.CheckSpec(src); err != nil {
			out = append(out, fmt.Sprintf("%s: %v", what, err))
		}
	}
	if !kindName.MatchString(a.clusterName) {
		out = append(out, fmt.Sprintf("CLUSTER_NAME %q is not a kind cluster name: lower-case letters, digits and '-'", a.clusterName))
	}
	// Switches take 0 or 1 only: KEEP_CLUSTER=0 once kept the cluster,
	// since anything non-empty did.
	for what, v := range map[string]string{"KEEP_CLUSTER": a.keepCluster, "UPGRADE": a.upgrade} {
		if v != "" && v != "0" && v != "1" {
			out = append(out, fmt.Sprintf("%s=%q: it takes 1 or 0", what, v))
		}
	}
	if d, err := time.ParseDuration(a.timeout); err != nil || d <= 0 {
		out = append(out, fmt.Sprintf("TIMEOUT=%q is not a positive Go duration such as 60m or 1h30m", a.timeout))
	}
	if n, err := strconv.Atoi(a.procs); err != nil || n < 1 {
		out = append(out, fmt.Sprintf("PROCS=%q is not a whole number of processes from 1", a.procs))
	}
	return out
}

func dockerAnswers(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return exec.CommandContext(ctx, "docker", "info").Run() == nil
}
