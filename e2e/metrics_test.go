package e2e

import (
	"context"
	"fmt"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/kep5018/adminaccess-conformance/e2e/builder"
	"github.com/kep5018/adminaccess-conformance/e2e/metrics"
)

// The metric specs are Serial: the counters and gauges are cluster-wide, and
// other specs running alongside would move them.

// scraper reads kube-controller-manager and kube-scheduler on the control-plane node.
type scraper struct {
	*metrics.Scraper
	node string
}

func newScraper(ctx context.Context, f *framework.Framework) *scraper {
	ginkgo.GinkgoHelper()
	nodes, err := env.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "node-role.kubernetes.io/control-plane"})
	framework.ExpectNoError(err)
	if len(nodes.Items) == 0 {
		ginkgo.Skip("no control-plane node is visible, so the components' metric endpoints cannot be reached")
	}
	s, err := metrics.NewScraper(ctx, env.Client, env.Config, f.Namespace.Name)
	framework.ExpectNoError(err)
	ginkgo.DeferCleanup(s.Cleanup, f.Namespace.Name)
	sc := &scraper{Scraper: s, node: nodes.Items[0].Name}
	if _, err := sc.Scrape(ctx, metrics.ControllerManager, sc.node); err != nil {
		ginkgo.Skip("the metric endpoint of kube-controller-manager cannot be reached: " + err.Error())
	}
	return sc
}

func (s *scraper) controllerManager(ctx context.Context) (metrics.Families, error) {
	return s.Scrape(ctx, metrics.ControllerManager, s.node)
}

// creates is the creation counters by outcome, as the release names them.
type creates struct{ AdminSuccess, OrdinarySuccess, Failure float64 }

func readCreates(f metrics.Families) creates {
	m := env.Rel.Metrics
	if !m.Labelled { // 1.33: attempts and failures, no admin_access label
		return creates{OrdinarySuccess: f.Sum(m.CreatesTotal, nil) - f.Sum(m.CreateFailures, nil), Failure: f.Sum(m.CreateFailures, nil)}
	}
	return creates{
		AdminSuccess:    f.Sum(m.CreatesTotal, map[string]string{"admin_access": "true", "status": "success"}),
		OrdinarySuccess: f.Sum(m.CreatesTotal, map[string]string{"admin_access": "false", "status": "success"}),
		Failure:         f.Sum(m.CreatesTotal, map[string]string{"status": "failure"}),
	}
}

func (c creates) minus(o creates) creates {
	return creates{c.AdminSuccess - o.AdminSuccess, c.OrdinarySuccess - o.OrdinarySuccess, c.Failure - o.Failure}
}

// expectedCreates is what N admin and M ordinary creations add, per release.
func expectedCreates(admin, ordinary int) creates {
	if !env.Rel.Metrics.Labelled {
		return creates{OrdinarySuccess: float64(admin + ordinary)}
	}
	return creates{AdminSuccess: float64(admin), OrdinarySuccess: float64(ordinary)}
}

// claimGauge is the resource_claims gauge as the release exposes it.
func claimGauge(f metrics.Families) map[string]float64 {
	m := env.Rel.Metrics
	if !m.Labelled {
		return map[string]float64{"all": f.Sum(m.ResourceClaims, nil), "allocated": f.Sum(m.AllocatedResourceClaims, nil)}
	}
	return f.Series(m.ResourceClaims)
}

// expectedClaimGauge computes that gauge from the claims that exist now.
func expectedClaimGauge(ctx context.Context) (map[string]float64, error) {
	list, err := env.DRA.ResourceClaims("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	if !env.Rel.Metrics.Labelled {
		out := map[string]float64{"all": float64(len(list.Items)), "allocated": 0}
		for _, c := range list.Items {
			if c.Status.Allocation != nil {
				out["allocated"]++
			}
		}
		return out, nil
	}
	var claims []metrics.Claim
	for _, c := range list.Items {
		claims = append(claims, metrics.Claim{
			Allocated:        c.Status.Allocation != nil,
			AdminAccess:      builder.RequestsAdminAccess(&c),
			FromTemplate:     c.Annotations["resource.kubernetes.io/pod-claim-name"] != "",
			ExtendedResource: c.Annotations[resourceapi.ExtendedResourceClaimAnnotation] == "true",
		})
	}
	return metrics.ExpectedClaimGauge(claims, env.Rel.Metrics.SourceLabel), nil
}

// podsWithClaims waits until the controller created each pod's claim.
func podsWithClaims(ctx context.Context, pods []*corev1.Pod) {
	ginkgo.GinkgoHelper()
	for _, pod := range pods {
		gomega.Eventually(ctx, func(ctx context.Context) ([]corev1.PodResourceClaimStatus, error) {
			p, err := env.Client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			return p.Status.ResourceClaimStatuses, nil
		}).WithTimeout(allocateTimeout).Should(gomega.ContainElement(gomega.HaveField("ResourceClaimName", gomega.Not(gomega.BeNil()))),
			"the controller creates the claim of pod %s", pod.Name)
	}
}

func startFromTemplate(ctx context.Context, b *builder.Builder, tmpl *resourceapi.ResourceClaimTemplate, n int) []*corev1.Pod {
	ginkgo.GinkgoHelper()
	var pods []*corev1.Pod
	for i := 0; i < n; i++ {
		pod, err := b.CreatePod(ctx, b.Pod(builder.FromTemplate(tmpl)))
		framework.ExpectNoError(err)
		pods = append(pods, pod)
	}
	return pods
}

var _ = ginkgo.Describe("Admin access metrics", ginkgo.Label("metrics"), ginkgo.Serial, func() {
	f := newFramework("metrics")

	ginkgo.It("counts claims created from admin-access and ordinary templates exactly, by admin_access", func(ctx context.Context) {
		kep("resourceclaim_controller_creates_total shows admin access in use")
		s := newScraper(ctx, f)
		b := newBuilder(f)
		labelForAdmin(ctx, f.Namespace.Name)
		adminTmpl, err := b.CreateTemplate(ctx, b.Template(builder.AdminAccess()))
		framework.ExpectNoError(err)
		ordinaryTmpl, err := b.CreateTemplate(ctx, b.Template())
		framework.ExpectNoError(err)
		before, err := s.controllerManager(ctx)
		framework.ExpectNoError(err)

		const admin, ordinary = 3, 2
		pods := append(startFromTemplate(ctx, b, adminTmpl, admin), startFromTemplate(ctx, b, ordinaryTmpl, ordinary)...)
		podsWithClaims(ctx, pods)
		want := expectedCreates(admin, ordinary)
		delta := func(ctx context.Context) (creates, error) {
			after, err := s.controllerManager(ctx)
			if err != nil {
				return creates{}, err
			}
			return readCreates(after).minus(readCreates(before)), nil
		}
		gomega.Eventually(ctx, delta).WithTimeout(allocateTimeout).Should(gomega.Equal(want), "%s moves by exactly the claims created", env.Rel.Metrics.CreatesTotal)
		gomega.Consistently(ctx, delta).WithTimeout(stableFor).Should(gomega.Equal(want), "and by no more")
	})

	ginkgo.It("keeps resourceclaim_controller_resource_claims equal to the claims that exist, before and after allocation and after deletion", func(ctx context.Context) {
		kep("resourceclaim_controller_resource_claims shows admin-access claims and their allocation")
		s := newScraper(ctx, f)
		b := newBuilder(f)
		labelForAdmin(ctx, f.Namespace.Name)
		matches := func(what string) {
			ginkgo.GinkgoHelper()
			gomega.Eventually(ctx, func(ctx context.Context) error {
				fams, err := s.controllerManager(ctx)
				if err != nil {
					return err
				}
				want, err := expectedClaimGauge(ctx)
				if err != nil {
					return err
				}
				if got := claimGauge(fams); fmt.Sprint(got) != fmt.Sprint(want) {
					return fmt.Errorf("gauge %v, claims that exist say %v", got, want)
				}
				return nil
			}).WithTimeout(allocateTimeout).Should(gomega.Succeed(), what)
		}
		claim, err := b.CreateClaim(ctx, b.Claim(builder.AdminAccess()))
		framework.ExpectNoError(err)
		// A gauge that matched because the apiserver dropped the field would prove nothing.
		gomega.Expect(builder.RequestsAdminAccess(claim)).To(gomega.BeTrue(), "the stored claim keeps adminAccess")
		matches("with an unallocated admin-access claim")
		pod, err := b.CreatePod(ctx, b.Pod(builder.UsingClaim(claim)))
		framework.ExpectNoError(err)
		expectRunning(ctx, b, pod)
		matches("with the admin-access claim allocated")
		framework.ExpectNoError(env.Client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{}))
		framework.ExpectNoError(env.DRA.ResourceClaims(claim.Namespace).Delete(ctx, claim.Name, metav1.DeleteOptions{}))
		gomega.Eventually(ctx, func(ctx context.Context) error {
			_, err := b.GetClaim(ctx, claim.Name)
			return err
		}).WithTimeout(allocateTimeout).Should(gomega.Satisfy(apierrors.IsNotFound), "claim %s is gone", claim.Name)
		matches("after the claim is deleted")
	})
})
