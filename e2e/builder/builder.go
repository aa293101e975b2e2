// SPDX-License-Identifier: Apache-2.0

// Package builder makes the claims, templates and pods of the specs, so that a
// spec reads as the behaviour it checks:
//
//	claim := b.Claim(builder.AdminAccess())
//	pod := b.Pod(builder.UsingClaim(claim))
//
// Objects are built as resource.k8s.io/v1 types and written through the
// dynamic-resource-allocation client, which converts them to the version the
// cluster serves (v1beta1 on 1.33).
package builder

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	draclient "k8s.io/dynamic-resource-allocation/client"
	"k8s.io/utils/ptr"
)

// RequestName is the name of a one-request claim's request.
const RequestName = "req-0"

// Builder makes objects in one namespace.
type Builder struct {
	Namespace  string
	Class      string // DeviceClass of the driver under test
	DriverName string
	Image      string // the workload image
	// Command keeps a pod of Image running where it is not the bundled
	// workload image (nil: that image's /workload).
	Command []string
	// AnyTaint lets every pod run on a tainted node: a vendor's
	// accelerator nodes are often tainted so that only their users land there.
	AnyTaint bool
	Client   kubernetes.Interface
	DRA      *draclient.Client
	// SchedulerName, where set, is the scheduler of every pod the builder
	// makes (empty: the cluster's default-scheduler).
	SchedulerName string
	// Prefix starts every name the builder makes, so that two builders can
	// share a namespace (a feature driver's beside the suite's).
	Prefix string
	seq    int
}

func (b *Builder) name(kind string) string {
	b.seq++
	return fmt.Sprintf("%s%s-%d", b.Prefix, kind, b.seq)
}

// RequestOption shapes a claim's request.
type RequestOption func(b *Builder, r *resourceapi.ExactDeviceRequest)

// AdminAccess asks for admin access to the devices.
func AdminAccess() RequestOption {
	return func(_ *Builder, r *resourceapi.ExactDeviceRequest) { r.AdminAccess = ptr.To(true) }
}

// NoAdminAccess writes adminAccess: false explicitly, which the API reads
// as no admin access (as if unset).
func NoAdminAccess() RequestOption {
	return func(_ *Builder, r *resourceapi.ExactDeviceRequest) { r.AdminAccess = ptr.To(false) }
}

// AllDevices asks for every matching device (allocationMode: All).
func AllDevices() RequestOption {
	return func(_ *Builder, r *resourceapi.ExactDeviceRequest) {
		r.AllocationMode = resourceapi.DeviceAllocationModeAll
		r.Count = 0
	}
}

// Count asks for n devices.
func Count(n int64) RequestOption {
	return func(_ *Builder, r *resourceapi.ExactDeviceRequest) {
		r.AllocationMode = resourceapi.DeviceAllocationModeExactCount
		r.Count = n
	}
}

// DeviceIndex selects the driver's device with that index attribute, so two
// claims can be aimed at the same device.
func DeviceIndex(i int) RequestOption {
	return func(b *Builder, r *resourceapi.ExactDeviceRequest) {
		r.Selectors = append(r.Selectors, resourceapi.DeviceSelector{CEL: &resourceapi.CELDeviceSelector{
			Expression: fmt.Sprintf("device.attributes[%q].index == %d", b.DriverName, i)}})
	}
}

// Tolerating tolerates device taints with that key and effect (operator Exists).
func Tolerating(key, effect string) RequestOption {
	return func(_ *Builder, r *resourceapi.ExactDeviceRequest) {
		r.Tolerations = append(r.Tolerations, resourceapi.DeviceToleration{
			Key: key, Operator: resourceapi.DeviceTolerationOpExists, Effect: resourceapi.DeviceTaintEffect(effect)})
	}
}

// Capacity asks for that much of a device's consumable capacity (KEP-5075:
// capacity.requests), for a device that allows multiple allocations.
func Capacity(name, quantity string) RequestOption {
	return func(_ *Builder, r *resourceapi.ExactDeviceRequest) {
		if r.Capacity == nil {
			r.Capacity = &resourceapi.CapacityRequirements{Requests: map[resourceapi.QualifiedName]resource.Quantity{}}
		}
		r.Capacity.Requests[resourceapi.QualifiedName(name)] = resource.MustParse(quantity)
	}
}

// Request is the shape of one request of a claim with several (ClaimOf,
// TemplateOf): Request(AdminAccess()) asks for one device with admin access.
func Request(opts ...RequestOption) []RequestOption { return opts }

// RequestNameAt is the name of request i: req-0, req-1, ...
func RequestNameAt(i int) string { return fmt.Sprintf("req-%d", i) }

// NotDeviceIndex keeps the request off the driver's device with that index,
// so an ordinary request never competes with devices a spec aims at.
func NotDeviceIndex(i int) RequestOption {
	return func(b *Builder, r *resourceapi.ExactDeviceRequest) {
		r.Selectors = append(r.Selectors, resourceapi.DeviceSelector{CEL: &resourceapi.CELDeviceSelector{
			Expression: fmt.Sprintf("device.attributes[%q].index != %d", b.DriverName, i)}})
	}
}

// exact is one exact request shaped by opts: one device of the class unless they say otherwise.
func (b *Builder) exact(opts []RequestOption) *resourceapi.ExactDeviceRequest {
	exact := &resourceapi.ExactDeviceRequest{DeviceClassName: b.Class, AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1}
	for _, o := range opts {
		o(b, exact)
	}
	return exact
}

func (b *Builder) spec(requests [][]RequestOption, configs []string) resourceapi.ResourceClaimSpec {
	var spec resourceapi.ResourceClaimSpec
	for i, opts := range requests {
		spec.Devices.Requests = append(spec.Devices.Requests, resourceapi.DeviceRequest{Name: RequestNameAt(i), Exactly: b.exact(opts)})
	}
	for _, raw := range configs {
		spec.Devices.Config = append(spec.Devices.Config, resourceapi.DeviceClaimConfiguration{
			DeviceConfiguration: resourceapi.DeviceConfiguration{Opaque: &resourceapi.OpaqueDeviceConfiguration{
				Driver: b.DriverName, Parameters: runtime.RawExtension{Raw: []byte(raw)}}}})
	}
	return spec
}

// Claim builds a ResourceClaim with one request.
func (b *Builder) Claim(opts ...RequestOption) *resourceapi.ResourceClaim {
	return b.ClaimOf(opts)
}

// ClaimOf builds a ResourceClaim with one request per argument, in order.
func (b *Builder) ClaimOf(requests ...[]RequestOption) *resourceapi.ResourceClaim {
	return &resourceapi.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: b.name("claim"), Namespace: b.Namespace},
		Spec:       b.spec(requests, nil),
	}
}

// SubRequestNameAt is the name of subrequest j of a prioritized list: sub-0, sub-1, ...
func SubRequestNameAt(j int) string { return fmt.Sprintf("sub-%d", j) }

// ClaimFirstAvailable builds a claim whose request 0 is a prioritized list
// (KEP-4816, firstAvailable): one subrequest per entry of subs, tried in
// order, followed by one exact request per further argument (req-1, ...).
// A subrequest has no adminAccess field: admin access is asked for in an
// exact request beside the list.
func (b *Builder) ClaimFirstAvailable(subs [][]RequestOption, exact ...[]RequestOption) *resourceapi.ResourceClaim {
	c := b.ClaimOf(append([][]RequestOption{nil}, exact...)...)
	list := &c.Spec.Devices.Requests[0]
	list.Exactly = nil
	for j, opts := range subs {
		e := b.exact(opts)
		list.FirstAvailable = append(list.FirstAvailable, resourceapi.DeviceSubRequest{
			Name: SubRequestNameAt(j), DeviceClassName: e.DeviceClassName, Selectors: e.Selectors,
			AllocationMode: e.AllocationMode, Count: e.Count, Tolerations: e.Tolerations,
		})
	}
	return c
}

// TemplateFirstAvailable builds a ResourceClaimTemplate whose claims are
// ClaimFirstAvailable's.
func (b *Builder) TemplateFirstAvailable(subs [][]RequestOption, exact ...[]RequestOption) *resourceapi.ResourceClaimTemplate {
	return &resourceapi.ResourceClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: b.name("template"), Namespace: b.Namespace},
		Spec:       resourceapi.ResourceClaimTemplateSpec{Spec: b.ClaimFirstAvailable(subs, exact...).Spec},
	}
}

// ClaimWithConfig builds a claim carrying opaque configuration for the driver.
func (b *Builder) ClaimWithConfig(rawConfig string, opts ...RequestOption) *resourceapi.ResourceClaim {
	c := b.Claim(opts...)
	c.Spec = b.spec([][]RequestOption{opts}, []string{rawConfig})
	return c
}

// Template builds a ResourceClaimTemplate with one request.
func (b *Builder) Template(opts ...RequestOption) *resourceapi.ResourceClaimTemplate {
	return b.TemplateOf(opts)
}

// TemplateOf builds a ResourceClaimTemplate with one request per argument, in order.
func (b *Builder) TemplateOf(requests ...[]RequestOption) *resourceapi.ResourceClaimTemplate {
	return &resourceapi.ResourceClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: b.name("template"), Namespace: b.Namespace},
		Spec:       resourceapi.ResourceClaimTemplateSpec{Spec: b.spec(requests, nil)},
	}
}

// PodClaim is one entry of a pod's spec.resourceClaims.
type PodClaim corev1.PodResourceClaim

// UsingClaim refers a pod to an existing claim.
func UsingClaim(c *resourceapi.ResourceClaim) PodClaim {
	return PodClaim{Name: "c-" + c.Name, ResourceClaimName: ptr.To(c.Name)}
}

// FromTemplate has the controller make the pod's claim from a template.
func FromTemplate(t *resourceapi.ResourceClaimTemplate) PodClaim {
	return PodClaim{Name: "c-" + t.Name, ResourceClaimTemplateName: ptr.To(t.Name)}
}

// Pod builds a pod whose one container uses every given claim and prints its
// DRA_ variables.
func (b *Builder) Pod(claims ...PodClaim) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: b.name("pod"), Namespace: b.Namespace},
		Spec:       b.PodSpec(claims...),
	}
	return pod
}

// command is what the workload container runs: Command where set (the
// image of a driver's user), else the bundled image's workload.
func (b *Builder) command() []string {
	if b.Command != nil {
		return b.Command
	}
	return []string{"/workload"}
}

// PodSpec is the spec Pod uses, for DaemonSets and other owners.
func (b *Builder) PodSpec(claims ...PodClaim) corev1.PodSpec {
	spec := corev1.PodSpec{
		TerminationGracePeriodSeconds: ptr.To(int64(1)),
		SchedulerName:                 b.SchedulerName,
		Containers: []corev1.Container{{
			Name: WorkloadContainer, Image: b.Image, Command: b.command(),
			ImagePullPolicy: corev1.PullIfNotPresent,
		}},
	}
	if b.AnyTaint {
		ToleratingAllTaints(&spec)
	}
	for _, c := range claims {
		spec.ResourceClaims = append(spec.ResourceClaims, corev1.PodResourceClaim(c))
		spec.Containers[0].Resources.Claims = append(spec.Containers[0].Resources.Claims, corev1.ResourceClaim{Name: c.Name})
	}
	return spec
}

// ContainerPerRequest builds a pod with one container per named request of
// one claim; container i uses only request i (resources.claims[].request),
// so each sees only the devices allocated for its own request.
func (b *Builder) ContainerPerRequest(claim PodClaim, requests ...string) *corev1.Pod {
	pod := b.Pod(claim)
	proto := pod.Spec.Containers[0]
	pod.Spec.Containers = nil
	for _, r := range requests {
		c := *proto.DeepCopy()
		c.Name = r
		c.Resources.Claims = []corev1.ResourceClaim{{Name: claim.Name, Request: r}}
		pod.Spec.Containers = append(pod.Spec.Containers, c)
	}
	return pod
}

// OnNode pins a pod to a node.
func OnNode(pod *corev1.Pod, node string) *corev1.Pod {
	pod.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": node}
	return pod
}

// OnNodes keeps the pods of spec to those nodes (a DaemonSet's to the
// nodes where a driver publishes devices).
func OnNodes(spec *corev1.PodSpec, nodes ...string) {
	spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: corev1.NodeSelectorOpIn, Values: nodes}},
		}}},
	}}
}

// ToleratingAllTaints lets pods of spec run on any node, the control plane
// (tainted NoSchedule by kubeadm) included: for pods meant for every node.
func ToleratingAllTaints(spec *corev1.PodSpec) {
	spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
}

// CreateClaim writes a claim at the served API version.
func (b *Builder) CreateClaim(ctx context.Context, c *resourceapi.ResourceClaim) (*resourceapi.ResourceClaim, error) {
	return b.DRA.ResourceClaims(c.Namespace).Create(ctx, c, metav1.CreateOptions{})
}

// CreateTemplate writes a template at the served API version.
func (b *Builder) CreateTemplate(ctx context.Context, t *resourceapi.ResourceClaimTemplate) (*resourceapi.ResourceClaimTemplate, error) {
	return b.DRA.ResourceClaimTemplates(t.Namespace).Create(ctx, t, metav1.CreateOptions{})
}

// CreatePod writes a pod.
func (b *Builder) CreatePod(ctx context.Context, p *corev1.Pod) (*corev1.Pod, error) {
	return b.Client.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
}

// GetClaim reads a claim at the served API version.
func (b *Builder) GetClaim(ctx context.Context, name string) (*resourceapi.ResourceClaim, error) {
	return b.DRA.ResourceClaims(b.Namespace).Get(ctx, name, metav1.GetOptions{})
}

// WorkloadContainer is the name of the one container of Pod.
const WorkloadContainer = "workload"
