// SPDX-License-Identifier: Apache-2.0

package adminaccess

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/kep5018/adminaccess-conformance/clusters/profile"
	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/report"
	"github.com/kep5018/adminaccess-conformance/e2e/testenv"
	"github.com/kep5018/adminaccess-conformance/e2e/timeline"
)

// The specs here switch DRAAdminAccess in components of the shared cluster.
// They are Serial (Ginkgo runs them last, alone) and each container moves the
// cluster to the profile it needs and back, restarting only the components
// whose gate differs.

// inProfile moves the cluster to profile name for the container's specs.
// Where gates cannot be switched, each spec skips itself with the reason, and
// does so after recording its KEP requirement (recordKEP, then requireGateSwitching), so
// a skipped row in the report still says what it would have checked. A skip
// here would come too early for that, and one in BeforeAll would give the later
// specs only Ginkgo's generic text.
//
// The move back waits until the container's pods are gone: a component whose
// gate comes back acts at once on what is left, and a pod kept waiting for an
// admin-access claim while kube-controller-manager had the gate off would
// otherwise get its claim made (or refused by the namespace's deletion, later)
// and counted in the next metrics spec's window (seen: +5 failures). Ginkgo
// runs AfterAll before the framework deletes the last spec's namespace, so
// the pods are deleted here.
func inProfile(f *framework.Framework, name string) {
	ginkgo.BeforeAll(inEnv(func(ctx context.Context) {
		e := envOf(ctx)
		if gatesSwitchable(e) {
			moveTo(ctx, name)
		}
	}))
	ginkgo.AfterAll(inEnv(func(ctx context.Context) {
		e := envOf(ctx)
		if gatesSwitchable(e) {
			deletePodsOf(ctx, f.BaseName)
			moveTo(ctx, e.Prof.Name)
		}
	}), ginkgo.NodeTimeout(restoreTimeout))
	ginkgo.BeforeEach(func() {
		ginkgo.AddReportEntry(report.ProfileEntry, name, ginkgo.ReportEntryVisibilityNever)
	})
}

// deletePodsOf deletes every pod in the namespaces made for basename's
// specs (basename-NNNN) and waits until they are gone. Each look deletes
// again (a pod the DaemonSet controller made anew meanwhile goes too), so it
// looks every second, not every poll.
func deletePodsOf(ctx context.Context, basename string) {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	gomega.Eventually(ctx, func(ctx context.Context) ([]string, error) {
		list, err := e.Client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		var left []string
		for _, ns := range list.Items {
			if !strings.HasPrefix(ns.Name, basename+"-") {
				continue
			}
			// Owners first, or the DaemonSet controller makes the pods anew.
			if err := e.Client.AppsV1().DaemonSets(ns.Name).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
				return nil, err
			}
			if err := e.Client.CoreV1().Pods(ns.Name).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
				return nil, err
			}
			pods, err := e.Client.CoreV1().Pods(ns.Name).List(ctx, metav1.ListOptions{})
			if err != nil {
				return nil, err
			}
			for _, p := range pods.Items {
				left = append(left, ns.Name+"/"+p.Name)
			}
		}
		return left, nil
	}).WithTimeout(2*time.Minute).WithPolling(time.Second).Should(gomega.BeEmpty(), "the pods of the %s specs are gone before the cluster moves back", basename)
}

// gatesSwitchable is false where the release table declares that this run
// cannot switch gates (the specs then skip themselves, with that reason).
func gatesSwitchable(e *testenv.Env) bool {
	_, declared := e.Rel.DeclaredSkip(release.NeedGateSwitching, e.Mode())
	return !declared
}

func moveTo(ctx context.Context, name string) {
	ginkgo.GinkgoHelper()
	p, err := profile.Get(name)
	framework.ExpectNoError(err)
	moveToProfile(ctx, p)
}

// moveToProfile moves the cluster and puts each component's restart on the
// report's timeline.
func moveToProfile(ctx context.Context, p profile.Profile) {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	start := time.Now()
	took, err := e.Cluster.MoveTo(ctx, p)
	for _, c := range profile.AllComponents {
		if d, ok := took[c]; ok {
			recordStep(timeline.Step{Kind: timeline.KindMove, Name: fmt.Sprintf("%s %s=%t%s (to profile %s)", c, release.Gate, p.Effective(e.Rel, c), e.Cluster.RestartedBy(c).Note(), p.Name), Started: start, Seconds: d.Seconds()})
		}
	}
	framework.ExpectNoError(err, "moving the cluster to profile %s", p.Name)
	framework.Logf("cluster moved to profile %s in %s (%v)", p.Name, time.Since(start).Round(time.Second), took)
	for c := range took {
		if leavesClientsBehind(c) {
			settle(ctx, "the move to profile "+p.Name)
			break
		}
	}
}

// switchGate switches one component and records how long it took.
func switchGate(ctx context.Context, c profile.Component, enable bool) {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	start := time.Now()
	took, err := e.Cluster.SetAdminAccess(ctx, c, enable)
	framework.ExpectNoError(err, "switching %s", c)
	recordStep(timeline.Step{Kind: timeline.KindMove, Name: fmt.Sprintf("%s %s=%t%s", c, release.Gate, enable, e.Cluster.RestartedBy(c).Note()), Started: start, Seconds: took.Seconds()})
	if leavesClientsBehind(c) {
		settle(ctx, fmt.Sprintf("switching %s", c))
	}
}

func controlPlaneOff() profile.Profile {
	return profile.Profile{Name: "control-plane-off", Description: "off in kube-apiserver, kube-controller-manager and kube-scheduler",
		AdminAccess: map[profile.Component]bool{profile.APIServer: false, profile.ControllerManager: false, profile.Scheduler: false}}
}

func podUIDs(ctx context.Context, ns string) []string {
	e := envOf(ctx)
	list, err := e.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	for _, p := range list.Items {
		out = append(out, string(p.UID)+"/"+string(p.Status.Phase))
	}
	sort.Strings(out)
	return out
}
