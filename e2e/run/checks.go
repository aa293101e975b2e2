// SPDX-License-Identifier: Apache-2.0

package run

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/mattn/go-shellwords"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kep5018/adminaccess-conformance/clusters/kindcluster"
	"github.com/kep5018/adminaccess-conformance/clusters/nodesource"
	"github.com/kep5018/adminaccess-conformance/clusters/profile"
	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/labels"
	"github.com/kep5018/adminaccess-conformance/e2e/testenv"
	"github.com/kep5018/adminaccess-conformance/e2e/variables"
	"github.com/kep5018/adminaccess-conformance/testdriver/push"
)

// Preflight is the run's first step: one line per bad variable, before
// anything is installed or built. First each variable's own check, in the
// table's order, then what needs the network: a TESTDRIVER_IMAGE that
// resolves, an existing cluster that answers and runs the release (and a
// driver of the user's own that can be claimed there), or, where Docker
// answers, cluster names that are free.
func Preflight(ctx context.Context, c Config) []string {
	out := c.Problems()
	if img := c.Get("TESTDRIVER_IMAGE"); img != "" {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		_, err := push.Resolve(ctx, img)
		cancel()
		if err != nil {
			out = append(out, "TESTDRIVER_IMAGE: "+err.Error())
		}
	}
	if kc := c.Kubeconfig(); kc != "" {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		driver, class, ns := c.Get("DRIVER"), c.Get("DEVICE_CLASS"), c.Get("DRIVER_NAMESPACE")
		if err := testenv.Preflight(ctx, kc, c.Get("KUBECONTEXT"), c.Releases()...); err != nil {
			out = append(out, err.Error())
		} else if checkDriver(c) != nil || checkDriverNamespace(c) != nil {
			// Already said; the cluster is not asked about names that are wrong anyway.
		} else {
			// DEVICE_CLASS=a,b: each class is a column of its own, and each
			// must hold on its own.
			for _, class := range variables.SplitClasses(class) {
				if err := testenv.PreflightVendorDriver(ctx, kc, c.Get("KUBECONTEXT"), driver, class, ns); err != nil {
					out = append(out, err.Error())
				}
			}
		}
	} else if dockerAnswers(ctx) {
		// Without a Docker engine no kind cluster can exist, so the name is free.
		for _, name := range c.clusterNames() {
			if err := kindcluster.CheckNameFree(name); err != nil {
				out = append(out, err.Error())
			}
		}
	}
	return out
}

// Problems are the variables' own checks: what needs no cluster and no
// Docker. A check may say several lines (a feature set that two releases
// lack).
func (c Config) Problems() []string {
	var out []string
	for _, v := range variables.Variables {
		check := checks[v.Name]
		if check == nil {
			continue
		}
		err := check(c)
		if many, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range many.Unwrap() {
				out = append(out, e.Error())
			}
		} else if err != nil {
			out = append(out, err.Error())
		}
	}
	return out
}

// clusterNames are the clusters the run will create (ClusterName of each
// release), each once.
func (c Config) clusterNames() []string {
	var out []string
	for _, r := range c.Releases() {
		if n := c.ClusterName(r); len(out) == 0 || out[len(out)-1] != n {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		out = []string{c.Get("CLUSTER_NAME")}
	}
	return out
}

func dockerAnswers(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return exec.CommandContext(ctx, "docker", "info").Run() == nil
}

// checks are the variables' checks, by the table's names (e2e/variables):
// each refuses a bad value in one line without a cluster; a variable with
// none takes any value. They live here, not in the table, because they
// reach into what the runner links (the release and profile tables,
// kubeconfigs, node image sources), which the suite binary must not.
var checks = map[string]func(Config) error{
	"K8S_VERSIONS":       checkReleases,
	"PROFILE":            checkProfile,
	"FEATURES":           checkFeatures,
	"DRIVER":             checkDriver,
	"DRIVER_NAMESPACE":   checkDriverNamespace,
	"LABELS":             checkLabels,
	"FOCUS":              checkRegexp("FOCUS"),
	"SKIP":               checkRegexp("SKIP"),
	"KEEP_CLUSTER":       checkSwitch("KEEP_CLUSTER"),
	"CLUSTER_NAME":       checkClusterName,
	"NODE_IMAGE":         checkImageSource("NODE_IMAGE"),
	"UPGRADE":            checkSwitch("UPGRADE"),
	"UPGRADE_NODE_IMAGE": checkImageSource("UPGRADE_NODE_IMAGE"),
	"KUBECONTEXT":        checkKubeContext,
	"PROCS":              checkProcs,
	"TIMEOUT":            checkTimeout,
	"GINKGO_ARGS":        checkGinkgoArgs,
	"BENCH_REPEAT":       checkBenchRepeat,
}

// Each check names the variable and what it takes, in one line.

func checkReleases(c Config) error {
	if len(c.Releases()) == 0 {
		return fmt.Errorf("no release given: K8S_VERSION(S) takes %s", strings.Join(release.Minors(), ", "))
	}
	var errs []error
	for _, name := range c.Releases() {
		if _, err := release.Get(name); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// releases are the releases of K8S_VERSIONS that exist (checkReleases
// says the others).
func (c Config) releases() []release.Release {
	var out []release.Release
	for _, name := range c.Releases() {
		if r, err := release.Get(name); err == nil {
			out = append(out, r)
		}
	}
	return out
}

func checkFeatures(c Config) error {
	var errs []error
	for _, r := range c.releases() {
		if _, err := r.WithFeatures(c.Get("FEATURES")); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// checkProfile refuses an unknown profile, and on clusters the suite makes
// one a release cannot run (a gate 1.36 locks).
func checkProfile(c Config) error {
	prof, err := profile.Get(c.Get("PROFILE"))
	if err != nil || c.Existing() {
		return err
	}
	var errs []error
	for _, r := range c.releases() {
		errs = append(errs, prof.CheckRunnable(r))
	}
	return errors.Join(errs...)
}

func checkDriver(c Config) error {
	return testenv.CheckVendorArgs(c.Kubeconfig(), c.Get("DRIVER"), c.Get("DEVICE_CLASS"), c.Get("ADMIN_CHECK"), c.Get("WORKLOAD_IMAGE"))
}

func checkDriverNamespace(c Config) error {
	return testenv.CheckDriverNamespace(c.Get("DRIVER"), c.Get("DRIVER_NAMESPACE"))
}

func checkLabels(c Config) error { return labels.Check(c.Get("LABELS")) }

// checkKubeContext: a context is one of KUBECONFIG's; alone, or one the
// kubeconfig lacks, it names no cluster, and client-go would refuse it only
// once a client is made. A kubeconfig that cannot be read is the
// cluster's check's to say (Preflight), once.
func checkKubeContext(c Config) error {
	name := c.Get("KUBECONTEXT")
	switch {
	case name == "":
		return nil
	case !c.Existing():
		return fmt.Errorf("KUBECONTEXT=%s names a context of a kubeconfig: give KUBECONFIG=path on the make command line too", name)
	}
	if _, err := clientcmd.LoadFromFile(c.Kubeconfig()); err != nil {
		return nil
	}
	if _, _, err := testenv.KubeconfigCluster(c.Kubeconfig(), name); err != nil {
		return fmt.Errorf("KUBECONTEXT=%s: %v", name, err)
	}
	return nil
}

func checkRegexp(name string) func(Config) error {
	return func(c Config) error {
		if _, err := regexp.Compile(c.Get(name)); err != nil {
			return fmt.Errorf("%s %q is not a regular expression: %v", name, c.Get(name), err)
		}
		return nil
	}
}

func checkImageSource(name string) func(Config) error {
	return func(c Config) error {
		if err := nodesource.CheckSpec(c.Get(name)); err != nil {
			return fmt.Errorf("%s: %v", name, err)
		}
		return nil
	}
}

var kindName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// A kind node's name is its cluster's name and its role (kind v0.33.0,
// pkg/cluster/internal/providers/common/namer.go:25-36), the control
// plane's the longest, and it is the node container's hostname
// (providers/docker/provision.go:218). kubelet labels its Node
// kubernetes.io/hostname with that hostname (Kubernetes'
// pkg/kubelet/kubelet_node_status.go:316), and a label value, like a DNS
// label, has at most 63 characters. kind only warns above 50 (its
// clusterNameMax, pkg/cluster/internal/create/create.go:46-49, counts
// sethostname's 64), and a longer name fails only once its nodes start.
const (
	controlPlaneSuffix = "-control-plane"
	maxHostname        = 63
)

func checkClusterName(c Config) error {
	name := c.Get("CLUSTER_NAME")
	if !kindName.MatchString(name) {
		return fmt.Errorf("CLUSTER_NAME %q is not a kind cluster name: lower-case letters, digits and '-'", name)
	}
	if c.Existing() {
		return nil // no kind cluster is made
	}
	for _, n := range c.clusterNames() {
		if node := n + controlPlaneSuffix; len(node) > maxHostname {
			kept := ""
			if n != name {
				kept = fmt.Sprintf(", and KEEP_CLUSTER=1 names each release's cluster as %s", n)
			}
			return fmt.Errorf("CLUSTER_NAME %q is too long: kind names the control-plane node %s, %d characters, and a node's hostname takes at most %d: give at most %d characters%s",
				name, node, len(node), maxHostname, maxHostname-len(controlPlaneSuffix)-(len(n)-len(name)), kept)
		}
	}
	return nil
}

// checkSwitch: switches take 0 or 1 only, and empty as 0; KEEP_CLUSTER=0
// once kept the cluster, since anything non-empty did.
func checkSwitch(name string) func(Config) error {
	return func(c Config) error {
		if v := c.Get(name); v != "" && v != "0" && v != "1" {
			return fmt.Errorf("%s=%q: it takes 1 or 0", name, v)
		}
		return nil
	}
}

func checkTimeout(c Config) error {
	if d, err := time.ParseDuration(c.Get("TIMEOUT")); err != nil || d <= 0 {
		return fmt.Errorf("TIMEOUT=%q is not a positive Go duration such as 60m or 1h30m", c.Get("TIMEOUT"))
	}
	return nil
}

func checkProcs(c Config) error {
	if n, err := strconv.Atoi(c.Get("PROCS")); err != nil || n < 1 {
		return fmt.Errorf("PROCS=%q is not a whole number of processes from 1", c.Get("PROCS"))
	}
	return nil
}

// checkBenchRepeat: make bench would otherwise refuse it only after the
// whole run it times.
func checkBenchRepeat(c Config) error {
	if n, err := strconv.Atoi(c.Get("BENCH_REPEAT")); err != nil || n < 1 {
		return fmt.Errorf("BENCH_REPEAT=%q is not a whole number of repeats from 1", c.Get("BENCH_REPEAT"))
	}
	return nil
}

// ginkgoArgs are GINKGO_ARGS's words, split as a shell splits them (the
// Makefile put the value into a shell command line): quotes group, and
// nothing is expanded.
func ginkgoArgs(c Config) ([]string, error) {
	words, err := shellwords.Parse(c.Get("GINKGO_ARGS"))
	if err != nil {
		return nil, fmt.Errorf("GINKGO_ARGS=%q: %v", c.Get("GINKGO_ARGS"), err)
	}
	return words, nil
}

func checkGinkgoArgs(c Config) error {
	_, err := ginkgoArgs(c)
	return err
}
