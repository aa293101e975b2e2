// SPDX-License-Identifier: Apache-2.0

// Package adminaccess is the conformance suite for DRA admin access
// (KEP-5018): its Ginkgo specs, one file per spec group with the helpers
// only it uses, the fixtures several groups use in files named for what
// they are (claims.go, pods.go, nodes.go, ...), and the suite's set-up and
// report (this file). One cluster per run: process 1 makes it (or reaches an existing one
// with --kubeconfig), installs the test driver, and every parallel process
// shares it. Specs that switch feature gates are Serial and run last.
//
// Importing the package registers the specs and runs nothing; the entry
// behind the e2e build tag (e2e/e2e_test.go, `go test -tags e2e ./e2e`,
// which make e2e runs through ginkgo) calls Main and runs the specs.
package adminaccess

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/kep5018/adminaccess-conformance/clusters/kindcluster"
	"github.com/kep5018/adminaccess-conformance/clusters/profile"
	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/report"
	"github.com/kep5018/adminaccess-conformance/e2e/resolved"
	"github.com/kep5018/adminaccess-conformance/e2e/testenv"
	"github.com/kep5018/adminaccess-conformance/e2e/timeline"
)

// suiteCommit is the suite's git commit, with "+changes" when the tree differs.
func suiteCommit() string {
	out, err := exec.Command("git", "-C", theRun.Layout.Root, "rev-parse", "HEAD").Output()
	if err != nil {
		// The suite's image has no repository: it names the commit it was built from.
		return os.Getenv("E2E_SUITE_COMMIT")
	}
	commit := strings.TrimSpace(string(out))
	if exec.Command("git", "-C", theRun.Layout.Root, "diff", "--quiet", "HEAD").Run() != nil {
		commit += "+changes"
	}
	return commit
}

// recordStep puts a timed step on the report's timeline.
func recordStep(step timeline.Step) {
	ginkgo.AddReportEntry(timeline.Entry, step, ginkgo.ReportEntryVisibilityNever)
}

var (
	// theRun is the resolved run (--run), read once per process (Main):
	// what the suite works from, read where it is used.
	runFile string
	theRun  resolved.Run
	// plan is theRun resolved, once per process (Main).
	plan *testenv.Plan
	// env is this process's view of the cluster, set in SynchronizedBeforeSuite.
	env *testenv.Env
	// runningGates are the gates read from the nodes before teardown (nil
	// where they could not be read).
	runningGates map[profile.Component]string
	// apiserverGates are kube-apiserver's DRA gates as its metrics report
	// them, read before teardown on an existing cluster whose nodes are out
	// of reach ("" where not read; apiserverGatesErr says why).
	apiserverGates    string
	apiserverGatesErr error
	// startCommit is the suite's commit when the run started, seconds after
	// Ginkgo compiled it: read at the end, a commit made during a long run
	// would be named for code that did not run.
	startCommit string
)

// registerFlags adds the suite's flag and the e2e framework's to the
// command line: done by Main, not at import, so that importing the package
// (go vet, a unit test) registers nothing. The suite's one flag is --run,
// the run the runner (e2e/run) or the in-cluster entry resolved and wrote
// (resolved.Write): its release, profile, feature set, cluster, driver,
// layout and the upgrade's decision.
func registerFlags() {
	framework.RegisterCommonFlags(flag.CommandLine)
	framework.RegisterClusterFlags(flag.CommandLine)
	flag.StringVar(&runFile, "run", "", "the resolved run (run.json) the runner wrote for this release: what the suite checks, where and how")
}

// Main is the suite binary's TestMain: it reads the flags, refuses bad
// input before any cluster is made, and runs the tests (Run).
func Main(m *testing.M) {
	registerFlags()
	flag.Parse()
	var err error
	if runFile == "" {
		err = fmt.Errorf("give --run=<run.json>, the run make e2e resolves and writes into the release's artifacts before the suite")
	} else {
		theRun, err = resolved.Read(runFile)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(2)
	}
	// Only the run's kubeconfig means "run against an existing cluster": a
	// KUBECONFIG exported in the shell, or the framework's flag, must
	// never redirect the suite.
	framework.TestContext.KubeConfig = theRun.Cluster.Kubeconfig
	if theRun.Cluster.Kubeconfig != "" {
		// The framework's own clients use the run's context too.
		framework.TestContext.KubeContext = theRun.Cluster.Context
	}
	if ginkgo.GinkgoParallelProcess() == 1 { // the one that writes the report
		startCommit = suiteCommit()
	}
	if err := checkLabelFilter(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(2)
	}
	// The run becomes this process's plan (the release's row, the profile,
	// and for an existing cluster its checks and the process's client
	// set); nothing after it resolves or dials again.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	plan, err = testenv.Resolve(ctx, theRun)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(2)
	}
	framework.AfterReadingAllFlags(&framework.TestContext)
	// After the framework's own defaults, which this replaces (see poll).
	gomega.SetDefaultEventuallyPollingInterval(poll)
	gomega.SetDefaultConsistentlyPollingInterval(poll)
	suitePreview = ginkgo.PreviewSpecs("count")
	specsToRun = suitePreview.PreRunStats.SpecsThatWillRun
	os.Exit(m.Run())
}

var _ = ginkgo.SynchronizedBeforeSuite(func(ctx context.Context) []byte {
	start := time.Now()
	os.Remove(progressFile()) // counts start at zero for this run
	clearClusterRecord()
	sh, err := plan.Setup(ctx, ginkgo.GinkgoWriter)
	if err != nil && sh.Owned && !theRun.Cluster.Keep {
		kindcluster.Delete(sh.ClusterName)
	}
	framework.ExpectNoError(err, "setting up the cluster")
	for _, step := range sh.Timeline {
		recordStep(step)
	}
	framework.Logf("cluster %s ready for specs in %s: Kubernetes %s (%s), profile %s, resource.k8s.io/%s",
		sh.ClusterName, time.Since(start).Round(time.Second), sh.ServerVersion, sh.Release, sh.Profile, sh.ResourceAPI)
	return sh.Encode()
}, func(ctx context.Context, data []byte) {
	sh, err := testenv.Decode(data)
	framework.ExpectNoError(err)
	env, err = plan.Connect(sh)
	framework.ExpectNoError(err)
	if env.Cluster != nil {
		// Each restart's steps go with the spec that moved the cluster.
		env.Cluster.Progress = ginkgo.GinkgoWriter
	}
	// The release bits of the upgrade spec are taken out while the specs
	// before it run.
	releaseBits.begin()
	// The allocators group's kube-schedulers start while the first specs run.
	startAllocatorSchedulers(ctx)
	// From here to the teardown, what breaks under the run is named as such.
	watchCluster()
	// The framework fell back to a default host while no kubeconfig was known
	// at flag time; the cluster's kubeconfig is the only source from here on.
	framework.TestContext.KubeConfig, framework.TestContext.KubeContext = sh.KubeconfigPath, sh.KubeContext
	framework.TestContext.Host = ""
})

// ReportAfterSuite runs once, on process 1, with every process's results.
var _ = ginkgo.ReportAfterSuite("report.json and report.md", func(r ginkgo.Report) {
	// The framework previews the specs at start-up (a dry run that also calls
	// this node); a report written then would read all-green if the run died.
	if r.SuiteConfig.DryRun {
		return
	}
	meta := report.Meta{Release: theRun.Given, Profile: theRun.Profile, Cluster: clusterProvenance(), Existing: theRun.Cluster.Existing(), Features: theRun.Features,
		DeviceClass: theRun.Vendor().DeviceClass}
	if env != nil {
		// The release at the patch that booted, a pre-release whole: what
		// the sign-off names as the column's Kubernetes.
		meta.Version = env.Rel.Version
		meta.Components = env.Components
		meta.NodeImage, meta.NodeImageID = env.NodeImage, env.NodeImageID
		meta.FeatureSet, meta.Allocator = env.Features().String(), env.Allocator()
		meta.Unreachable = env.Rel.Unreachable
		meta.Gates = map[string]string{}
		for _, c := range profile.AllComponents {
			meta.Gates[string(c)] = profile.FormatGates(env.Prof.Gates(env.Rel, c))
		}
		// Where the nodes could be read (before teardown), what the
		// components ran, not what the profile asked for.
		if runningGates != nil {
			for c, g := range runningGates {
				meta.Gates[string(c)] = g
			}
			meta.GatesRead = true
		} else if theRun.Cluster.Kubeconfig != "" {
			// An existing cluster's flags are not the profile's: what the
			// API tells, and that the rest is out of reach.
			for c := range meta.Gates {
				meta.Gates[c] = unreachableGates
			}
			meta.Gates[string(profile.APIServer)] = apiserverGates + " (its metrics)"
			if apiserverGatesErr != nil {
				meta.Gates[string(profile.APIServer)] = "not read: " + apiserverGatesErr.Error()
			}
			meta.GatesFrom = "as the API tells them"
		}
	}
	meta.SuiteCommit, meta.KindVersion, meta.GoVersion = startCommit, release.KindVersion, runtime.Version()
	meta.LabelFilter, meta.Focus, meta.Skip = r.SuiteConfig.LabelFilter, r.SuiteConfig.FocusStrings, r.SuiteConfig.SkipStrings
	out := report.FromGinkgo(r, meta, clusterBreaks...)
	before, err := timeline.ReadFile(theRun.Layout.Timeline)
	framework.ExpectNoError(err)
	out.Timeline = append(before, out.Timeline...)
	os.MkdirAll(theRun.Layout.Artifacts, 0o755)
	framework.ExpectNoError(out.WriteJSON(filepath.Join(theRun.Layout.Artifacts, "report.json")))
	framework.ExpectNoError(out.WriteMarkdown(filepath.Join(theRun.Layout.Artifacts, "report.md")))
	if sel := out.Selection(); sel != "" {
		fmt.Fprintln(os.Stdout, "\ne2e:", sel)
	}
	if failures := out.Failures(8, 300); failures != "" {
		fmt.Fprint(os.Stdout, "\n"+failures)
	}
	if broke := out.ClusterBroke(); broke != "" {
		fmt.Fprintln(os.Stdout, "\n"+broke)
	}
	if kd := out.KnownDefects(); kd != "" {
		fmt.Fprintln(os.Stdout, "\n"+kd)
	}
	fmt.Fprintf(os.Stdout, "\n%s (report: %s)\n", out.Summary(), filepath.Join(theRun.Layout.Artifacts, "report.md"))
	// Ginkgo keeps a skip a skip; the suite does not. Failing here makes the
	// run (and make e2e) fail for any skip the release table does not declare.
	if undeclared := out.Undeclared(); len(undeclared) > 0 {
		ginkgo.Fail(fmt.Sprintf("%d spec(s) skipped without a skip the release table declares for Kubernetes %s in this mode:\n  %s",
			len(undeclared), theRun.Given, strings.Join(undeclared, "\n  ")))
	}
})

var _ = ginkgo.SynchronizedAfterSuite(func() {}, func(ctx context.Context) {
	if env == nil {
		return
	}
	stopWatching()
	// The gates the components run with, for the report, while the nodes
	// are still there (ReportAfterSuite runs after the teardown).
	if env.Cluster != nil {
		if g, err := env.Cluster.RunningGates(); err == nil {
			runningGates = g
		} else {
			fmt.Fprintf(os.Stdout, "e2e: the components' gates could not be read from the nodes, the report lists the profile's: %v\n", err)
		}
	} else if theRun.Cluster.Kubeconfig != "" {
		apiserverGates, apiserverGatesErr = existingClusterGates(ctx)
	}
	// The driver's log (one line per prepared claim, with its duration) is kept on every run.
	saveDriverLogs(ctx, filepath.Join(theRun.Layout.Artifacts, "testdriver.log"))
	saveClusterRecord(ctx, filepath.Join(theRun.Layout.Artifacts, "cluster"))
	stopAllocatorSchedulers(ctx)
	// Any process's failure leaves the marker; then the cluster's logs are kept too.
	_, err := os.Stat(failureMarker())
	failed := err == nil
	start := time.Now()
	err = testenv.Teardown(ctx, env, theRun.Layout.Artifacts, failed, theRun.Cluster.Keep, ginkgo.GinkgoWriter)
	recordStep(timeline.Since(timeline.KindTeardown, "logs and cluster deletion", start))
	framework.ExpectNoError(err)
}, ginkgo.NodeTimeout(5*time.Minute))
