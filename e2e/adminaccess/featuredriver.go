// SPDX-License-Identifier: Apache-2.0

package adminaccess

import (
	"context"
	"sort"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/builder"
	"github.com/kep5018/adminaccess-conformance/testdriver/contract"
	"github.com/kep5018/adminaccess-conformance/testdriver/deploy"
)

// featureDriver is a second instance of the bundled driver that publishes
// the layout one feature group needs (testenv.Env.FeatureDriver). The first
// spec of the group that runs installs it, after its need was checked (a
// spec that skips installs nothing), and it is removed after the group, so
// no other spec ever sees its devices. Groups using one are Ordered.
type featureDriver struct {
	layout contract.Layout
	need   release.Need
	// owner is the allocator whose specs have this instance (the allocators
	// group's, beside the feature group's); "" for the feature group's.
	owner string
	opts  *deploy.Options
}

// newFeatureDriver registers the group's removal of the instance; call it
// in the group's body.
func newFeatureDriver(layout contract.Layout, need release.Need) *featureDriver {
	return newFeatureDriverFor(layout, need, "")
}

// newFeatureDriverFor is newFeatureDriver for an allocator's specs: an
// instance of the layout under names of its own (testenv's
// FeatureDriverFor), so that they run beside the feature group's.
func newFeatureDriverFor(layout contract.Layout, need release.Need, owner string) *featureDriver {
	d := &featureDriver{layout: layout, need: need, owner: owner}
	ginkgo.AfterAll(inEnv(func(ctx context.Context) {
		e := envOf(ctx)
		if d.opts == nil {
			return
		}
		// The kubelet unprepares a pod's claims through the driver that
		// prepared them, and the framework deletes a spec's namespace only
		// after the group's AfterAll: removed first, the driver would leave
		// the group's last pods Terminating for ever ("DRA driver ... is not
		// registered", seen on 1.35), and their namespaces with them, on a
		// cluster the run must leave as found. So those pods go first.
		gomega.Eventually(ctx, func(ctx context.Context) ([]string, error) {
			return deletePodsUsing(ctx, d.opts.DriverName)
		}).WithTimeout(podDeleteTimeout).WithPolling(time.Second).Should(gomega.BeEmpty(), "pods holding claims the %s driver allocated, still there after its group", d.layout)
		framework.ExpectNoError(deploy.Uninstall(ctx, e.Client, e.Dynamic, *d.opts), "removing the %s driver", d.layout)
	}))
	return d
}

// builder checks the spec's need, installs the instance once, and gives a
// builder aimed at its devices in the spec's namespace.
func (d *featureDriver) builder(ctx context.Context, f *framework.Framework) *builder.Builder {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	require(ctx, d.need, nil)
	if d.opts == nil {
		o := e.FeatureDriverFor(d.layout, d.owner)
		framework.ExpectNoError(e.ClearFeatureDriverPlace(ctx, o, ginkgo.GinkgoWriter), "making way for the %s driver %s", d.layout, o.DriverName)
		d.opts = &o
		framework.ExpectNoError(deploy.Install(ctx, e.Client, e.Dynamic, o), "installing the %s driver %s", d.layout, o.DriverName)
		expectLayoutKept(ctx, o)
	}
	b := newBuilder(ctx, f)
	b.Class, b.DriverName = d.opts.DeviceClass, d.opts.DriverName
	b.Prefix = string(d.layout) + "-"
	return b
}

// layoutShape counts what the published slices of a driver carry beyond
// plain devices.
type layoutShape struct {
	CounterSets, ConsumingDevices, TaintedDevices int
	// SharedDevices allow multiple allocations and have a capacity with a
	// request policy.
	SharedDevices int
}

// expectLayoutKept checks that kube-apiserver stored what the layout needs.
// It drops sharedCounters and consumesCounters where DRAPartitionableDevices
// is off, taints where DRADeviceTaints is off, and allowMultipleAllocations
// and request policies where DRAConsumableCapacity is off: the devices would
// then be plain ones, and a spec could pass for the wrong reason.
func expectLayoutKept(ctx context.Context, o deploy.Options) {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	n := len(bundledDriverNodes(ctx))
	var want layoutShape
	switch o.Layout {
	case contract.LayoutPartitionable:
		want = layoutShape{CounterSets: n, ConsumingDevices: n * len(contract.PartitionDevices)}
	case contract.LayoutTainted:
		want = layoutShape{TaintedDevices: n * len(contract.TaintedDevices)}
	case contract.LayoutShared:
		want = layoutShape{SharedDevices: n}
	}
	gvr := schema.GroupVersionResource{Group: "resource.k8s.io", Version: e.ResourceAPI, Resource: "resourceslices"}
	list, err := e.Dynamic.Resource(gvr).List(ctx, metav1.ListOptions{FieldSelector: "spec.driver=" + o.DriverName})
	framework.ExpectNoError(err)
	var got layoutShape
	for _, s := range list.Items {
		sets, _, _ := unstructured.NestedSlice(s.Object, "spec", "sharedCounters")
		got.CounterSets += len(sets)
		devices, _, _ := unstructured.NestedSlice(s.Object, "spec", "devices")
		for _, dev := range devices {
			m, _ := dev.(map[string]any)
			if c, _, _ := unstructured.NestedSlice(m, "consumesCounters"); len(c) > 0 {
				got.ConsumingDevices++
			}
			if t, _, _ := unstructured.NestedSlice(m, "taints"); len(t) > 0 {
				got.TaintedDevices++
			}
			multiple, _, _ := unstructured.NestedBool(m, "allowMultipleAllocations")
			if _, policy, _ := unstructured.NestedMap(m, "capacity", contract.SharedCapacity, "requestPolicy"); multiple && policy {
				got.SharedDevices++
			}
		}
	}
	gomega.Expect(got).To(gomega.Equal(want), "kube-apiserver must store the %s layout's fields as published (its feature gate on) on all %d nodes", o.Layout, n)
}

// deletePodsUsing deletes the pods (and DaemonSets, which would make them
// anew) of every namespace with a claim the driver allocated, and lists
// those still there as namespace/name.
func deletePodsUsing(ctx context.Context, driver string) ([]string, error) {
	e := envOf(ctx)
	list, err := e.DRA.ResourceClaims("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	namespaces := map[string]bool{}
	for _, c := range list.Items {
		if c.Status.Allocation == nil {
			continue
		}
		for _, r := range c.Status.Allocation.Devices.Results {
			if r.Driver == driver {
				namespaces[c.Namespace] = true
			}
		}
	}
	var left []string
	for ns := range namespaces {
		if err := e.Client.AppsV1().DaemonSets(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
			return nil, err
		}
		if err := e.Client.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
			return nil, err
		}
		pods, err := e.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		for _, p := range pods.Items {
			left = append(left, ns+"/"+p.Name)
		}
	}
	sort.Strings(left)
	return left, nil
}
