// SPDX-License-Identifier: Apache-2.0

package adminaccess

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/metrics"
	"github.com/kep5018/adminaccess-conformance/e2e/observe"
	"github.com/kep5018/adminaccess-conformance/testdriver/deploy"
)

// What the metric specs read of kube-controller-manager and kube-scheduler,
// and how they wait on it; the specs are in metrics.go.

// scraper reads kube-controller-manager and kube-scheduler on the control-plane node.
type scraper struct {
	*metrics.Scraper
	node string
}

// newScraper reaches the metric endpoints of the components a spec reads,
// on the control-plane node. On a cluster the suite created they must answer:
// an unreachable endpoint fails the spec with the cause; only an existing
// cluster may skip (release.NeedMetricsEndpoints).
func newScraper(ctx context.Context, f *framework.Framework, reads ...metrics.Component) *scraper {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	var sc *scraper
	require(ctx, release.NeedMetricsEndpoints, func(ctx context.Context) error {
		nodes, err := e.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: deploy.ControlPlaneLabel})
		if err != nil {
			return err
		}
		if len(nodes.Items) == 0 {
			return errors.New("no node has the control-plane role, so the components' metric endpoints cannot be found")
		}
		s, err := metrics.NewScraper(ctx, e.Client, e.Config, f.Namespace.Name)
		if err != nil {
			return err
		}
		ginkgo.DeferCleanup(s.Cleanup, f.Namespace.Name)
		sc = &scraper{Scraper: s, node: nodes.Items[0].Name}
		for _, c := range reads {
			// The token's binding to system:monitoring takes a moment to be in force.
			var last error
			if err := wait.PollUntilContextTimeout(ctx, time.Second, 30*time.Second, true, func(ctx context.Context) (bool, error) {
				_, last = sc.Scrape(ctx, c, sc.node)
				return last == nil, nil
			}); err != nil {
				return fmt.Errorf("the metric endpoint of %s on %s does not answer: %v", c.Name, sc.node, last)
			}
		}
		return nil
	})
	return sc
}

func (s *scraper) controllerManager(ctx context.Context) (metrics.Families, error) {
	return s.Scrape(ctx, metrics.ControllerManager, s.node)
}

// scheduler reads the kube-scheduler that schedules the running spec's
// pods: an allocator scheduler of the suite's (specScheduler), whose
// counters are its process's own, or the cluster's.
func (s *scraper) scheduler(ctx context.Context) (metrics.Families, error) {
	if specScheduler != "" {
		return s.ScrapePod(ctx, schedulerSystemNamespace, specScheduler, metrics.Scheduler.Port)
	}
	return s.Scrape(ctx, metrics.Scheduler, s.node)
}

// creates is the creation counters by outcome, as the release names them.
// AdminFailure is the part of Failure labelled admin_access="true" (1.34+).
type creates struct{ AdminSuccess, OrdinarySuccess, Failure, AdminFailure float64 }

func readCreates(m release.Metrics, f metrics.Families) creates {
	if !m.Labelled { // 1.33: attempts and failures, no admin_access label
		return creates{OrdinarySuccess: f.Sum(m.CreatesTotal, nil) - f.Sum(m.CreateFailures, nil), Failure: f.Sum(m.CreateFailures, nil)}
	}
	return creates{
		AdminSuccess:    f.Sum(m.CreatesTotal, map[string]string{"admin_access": "true", "status": "success"}),
		OrdinarySuccess: f.Sum(m.CreatesTotal, map[string]string{"admin_access": "false", "status": "success"}),
		Failure:         f.Sum(m.CreatesTotal, map[string]string{"status": "failure"}),
		AdminFailure:    f.Sum(m.CreatesTotal, map[string]string{"admin_access": "true", "status": "failure"}),
	}
}

func (c creates) minus(o creates) creates {
	return creates{c.AdminSuccess - o.AdminSuccess, c.OrdinarySuccess - o.OrdinarySuccess, c.Failure - o.Failure, c.AdminFailure - o.AdminFailure}
}

// expectedCreates is what N admin and M ordinary creations add, per release.
func expectedCreates(m release.Metrics, admin, ordinary int) creates {
	if !m.Labelled {
		return creates{OrdinarySuccess: float64(admin + ordinary)}
	}
	return creates{AdminSuccess: float64(admin), OrdinarySuccess: float64(ordinary)}
}

// claimGauge is the resource_claims gauge as the release exposes it.
func claimGauge(m release.Metrics, f metrics.Families) map[string]float64 {
	if !m.Labelled {
		return map[string]float64{"all": f.Sum(m.ResourceClaims, nil), "allocated": f.Sum(m.AllocatedResourceClaims, nil)}
	}
	return f.Series(m.ResourceClaims)
}

// expectedClaimGauge computes that gauge from the claims that exist now.
func expectedClaimGauge(ctx context.Context) (map[string]float64, error) {
	e := envOf(ctx)
	list, err := e.DRA.ResourceClaims("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	if !e.Rel.Metrics.Labelled {
		out := map[string]float64{"all": float64(len(list.Items)), "allocated": 0}
		for _, c := range list.Items {
			if c.Status.Allocation != nil {
				out["allocated"]++
			}
		}
		return out, nil
	}
	var claims []metrics.Claim
	for i := range list.Items {
		claims = append(claims, gaugeClaim(&list.Items[i]))
	}
	return metrics.ExpectedClaimGauge(claims, e.Rel.Metrics.SourceLabel), nil
}

// gaugeClaim is what the resource_claims gauge reads of a claim.
func gaugeClaim(c *resourceapi.ResourceClaim) metrics.Claim {
	return metrics.Claim{
		Allocated:        c.Status.Allocation != nil,
		AdminAccess:      observe.RequestsAdminAccess(c),
		FromTemplate:     c.Annotations["resource.kubernetes.io/pod-claim-name"] != "",
		ExtendedResource: c.Annotations[resourceapi.ExtendedResourceClaimAnnotation] == "true",
	}
}

// scrapePoll is how often a wait on a metric looks, in place of poll: each
// look opens a port-forward to the component and parses all it exports.
const scrapePoll = time.Second

// eventuallyScraped and consistentlyScraped are Eventually and Consistently
// for a value read from a component's metrics (see scrapePoll).
func eventuallyScraped(ctx context.Context, read any) gomega.AsyncAssertion {
	return gomega.Eventually(ctx, read).WithPolling(scrapePoll)
}

func consistentlyScraped(ctx context.Context, read any) gomega.AsyncAssertion {
	return gomega.Consistently(ctx, read).WithPolling(scrapePoll)
}

// createsSince reads how the creation counters moved since before.
func (s *scraper) createsSince(before metrics.Families) func(ctx context.Context) (creates, error) {
	return func(ctx context.Context) (creates, error) {
		e := envOf(ctx)
		after, err := s.controllerManager(ctx)
		if err != nil {
			return creates{}, err
		}
		return readCreates(e.Rel.Metrics, after).minus(readCreates(e.Rel.Metrics, before)), nil
	}
}

// expectFamily fails unless the scrape has the family: a delta computed from
// an absent (renamed, unregistered) family would read 0 and prove nothing.
func expectFamily(f metrics.Families, name string) {
	ginkgo.GinkgoHelper()
	gomega.Expect(f.Has(name)).To(gomega.BeTrue(), "the scrape has no family %s", name)
}
