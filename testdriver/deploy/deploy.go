// SPDX-License-Identifier: Apache-2.0

// Package deploy installs the test driver into a cluster and removes it again,
// from manifests embedded in the binary: no kubectl or Helm at run time.
package deploy

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"strings"
	"text/template"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kep5018/adminaccess-conformance/testdriver/contract"
)

//go:embed manifests/driver.yaml
var driverManifests string

// Options describe one installation.
type Options struct {
	Namespace  string
	Image      string
	DriverName string
	// Layout is what the driver publishes on each node (plain unless set);
	// Devices how many plain devices.
	Layout  contract.Layout
	Devices int
	// Slots is how many spare pools of Devices devices the plain layout
	// publishes on each node beside the node's own, each with a class of
	// its own (SlotClassObjects); DeviceClass then selects the own pool's
	// only. The suite's own driver has contract.Slots, a feature driver none.
	Slots int
	// Taints are added on top of the layout's (the driver's --taint).
	Taints contract.AddedTaints
	// CountersWithDevices publishes the partitionable layout's counter set
	// in its devices' slice (the driver's --counters-with-devices): the
	// shape the cluster's release takes (release.Release's
	// CountersWithDevices), since none passes both 1.34's and 1.35's
	// validation.
	CountersWithDevices bool
	// DeviceClass is the class the suite's claims use.
	DeviceClass string
	// APIServerHost and APIServerPort, when set, are where the driver
	// reaches kube-apiserver instead of the kubernetes Service. The suite
	// sets them on the kind clusters it creates: a restarting kube-apiserver
	// takes its own address out of that Service, from its shutdown until it
	// serves again, and kube-proxy then refuses every connection to the
	// Service at once, so the driver's watch failed over and over and backed
	// off (its ResourceSlices came back up to 1:54 after the kubelet had
	// deleted them). At the control-plane node's own address a connection
	// waits for the new process instead (clusters/kindcluster/hold.go).
	APIServerHost string
	APIServerPort string
	// RunID names the run that installed the driver, and Kept says that run
	// was told to keep it (KEEP_CLUSTER=1): both are labels of its
	// namespace, so a later run tells its own kind's installation from a
	// user's and a deliberately kept one from one an interrupted run left.
	RunID string
	Kept  bool
	// WorkersOnly keeps the driver off control-plane nodes (those with the
	// node-role.kubernetes.io/control-plane label). The suite sets it on a
	// cluster it did not create: a managed cluster registers no such node,
	// and on one that does (a kind cluster given with KUBECONFIG) nothing
	// of a run meant for a managed one should land there. On its own
	// clusters the driver runs on every node.
	WorkersOnly bool
}

// ManagedBy is the app.kubernetes.io/managed-by label of every namespace the
// suite installs a driver in.
const ManagedBy = "dra-adminaccess-e2e"

// ManagedBy is for the manifest's template.
func (Options) ManagedBy() string { return ManagedBy }

// Namespace labels the Existing decision reads.
const (
	RunLabel  = "e2e.kep5018.io/run"
	KeptLabel = "e2e.kep5018.io/kept"
)

// Found is what a run finds where it would install the driver.
type Found int

const (
	// NotThere: nothing; install, and remove at the end.
	NotThere Found = iota
	// Kept: a driver a run was told to keep; replace it with this run's
	// (its image may be older) and keep that at the end, as found.
	Kept
	// Stale: a driver a run installed and did not remove (it was killed);
	// remove it, install this run's, remove that at the end.
	Stale
	// NotOurs: a namespace of that name the suite did not make; refuse.
	NotOurs
)

// Existing judges the labels of the namespace found at the driver's place
// (nil: none there).
func Existing(labels map[string]string, found bool) Found {
	switch {
	case !found:
		return NotThere
	case labels["app.kubernetes.io/managed-by"] != ManagedBy:
		return NotOurs
	case labels[KeptLabel] == "true":
		return Kept
	}
	return Stale
}

// Defaults fills what was left empty.
func (o Options) Defaults() Options {
	if o.Namespace == "" {
		o.Namespace = contract.Namespace
	}
	if o.DriverName == "" {
		o.DriverName = contract.DriverName
	}
	if o.Layout == "" {
		o.Layout = contract.LayoutPlain
	}
	if o.Devices == 0 {
		o.Devices = contract.PlainDevices
	}
	if o.DeviceClass == "" {
		o.DeviceClass = o.DriverName
	}
	return o
}

// Published is how many devices the driver publishes on each node, its
// spare pools' included.
func (o Options) Published() int { return o.Layout.Published(o.Devices) * (1 + o.Slots) }

// Objects renders the embedded manifests into typed objects.
func Objects(o Options) ([]any, error) {
	var buf bytes.Buffer
	if err := template.Must(template.New("driver").Parse(driverManifests)).Execute(&buf, o); err != nil {
		return nil, err
	}
	var out []any
	dec := utilyaml.NewYAMLReader(bufio.NewReader(&buf))
	for {
		doc, err := dec.Read()
		if err != nil {
			break
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("embedded manifest: %w", err)
		}
		out = append(out, obj)
	}
	return out, nil
}

// ResourceVersion finds the newest resource.k8s.io version the cluster serves
// (v1 from 1.34, v1beta2/v1beta1 on 1.33 with the suite's runtime-config).
func ResourceVersion(client kubernetes.Interface) (string, error) {
	groups, err := client.Discovery().ServerGroups()
	if err != nil {
		return "", fmt.Errorf("discovery: %w", err)
	}
	for _, g := range groups.Groups {
		if g.Name != "resource.k8s.io" {
			continue
		}
		for _, want := range []string{"v1", "v1beta2", "v1beta1"} {
			for _, v := range g.Versions {
				if v.Version == want {
					return want, nil
				}
			}
		}
	}
	return "", fmt.Errorf("the cluster does not serve resource.k8s.io (Dynamic Resource Allocation is off)")
}

// DeviceClassObject is the class selecting every device of the driver, of
// its own pools (slot 0) where it has spare ones.
func DeviceClassObject(o Options, version string) *unstructured.Unstructured {
	return classObject(o.DeviceClass, slotSelector(o, 0), version)
}

// SlotClassObjects are the classes of the driver's spare pools, slot 1 to
// Slots (contract.SlotClass).
func SlotClassObjects(o Options, version string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for k := 1; k <= o.Slots; k++ {
		out = append(out, classObject(contract.SlotClass(o.DeviceClass, k), slotSelector(o, k), version))
	}
	return out
}

// slotSelector is the CEL expression of the driver's devices of slot k.
func slotSelector(o Options, k int) string {
	expr := fmt.Sprintf("device.driver == %q", o.DriverName)
	if o.Slots > 0 {
		expr += fmt.Sprintf(" && device.attributes[%q].%s == %d", o.DriverName, contract.SlotAttribute, k)
	}
	return expr
}

func classObject(name, expression, version string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "resource.k8s.io/" + version,
		"kind":       "DeviceClass",
		"metadata":   map[string]any{"name": name},
		"spec": map[string]any{"selectors": []any{map[string]any{"cel": map[string]any{
			"expression": expression}}}},
	}}
}

// Install creates everything and waits until every node publishes its devices.
func Install(ctx context.Context, client kubernetes.Interface, dyn dynamic.Interface, o Options) error {
	o = o.Defaults()
	version, err := ResourceVersion(client)
	if err != nil {
		return err
	}
	objs, err := Objects(o)
	if err != nil {
		return err
	}
	for _, obj := range objs {
		if err := create(ctx, client, obj); err != nil {
			return err
		}
	}
	gvr := schema.GroupVersionResource{Group: "resource.k8s.io", Version: version, Resource: "deviceclasses"}
	for _, class := range append([]*unstructured.Unstructured{DeviceClassObject(o, version)}, SlotClassObjects(o, version)...) {
		if _, err := dyn.Resource(gvr).Create(ctx, class, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("DeviceClass %s: %w", class.GetName(), err)
		}
	}
	return WaitPublished(ctx, client, dyn, o, version, 3*time.Minute)
}

// ControlPlaneLabel marks kubeadm's control-plane nodes.
const ControlPlaneLabel = "node-role.kubernetes.io/control-plane"

// IsControlPlane says whether n is a control-plane node by its label.
func IsControlPlane(n corev1.Node) bool {
	_, ok := n.Labels[ControlPlaneLabel]
	return ok
}

// WaitPublished waits until every node (every worker, with WorkersOnly) has a ResourceSlice of the driver with all its devices.
func WaitPublished(ctx context.Context, client kubernetes.Interface, dyn dynamic.Interface, o Options, version string, timeout time.Duration) error {
	o = o.Defaults()
	gvr := schema.GroupVersionResource{Group: "resource.k8s.io", Version: version, Resource: "resourceslices"}
	var seen string
	// Every quarter second: after a restart the specs wait on this (settle),
	// and a wait ends on average half an interval after the slices are back.
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		slices, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		perNode := map[string]int{}
		for _, s := range slices.Items {
			driver, _, _ := unstructured.NestedString(s.Object, "spec", "driver")
			node, _, _ := unstructured.NestedString(s.Object, "spec", "nodeName")
			devices, _, _ := unstructured.NestedSlice(s.Object, "spec", "devices")
			if driver == o.DriverName {
				perNode[node] += len(devices)
			}
		}
		seen = fmt.Sprint(perNode)
		for _, n := range nodes.Items {
			if perNode[n.Name] != o.Published() && !(o.WorkersOnly && IsControlPlane(n)) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("driver %s did not publish %d devices on every node within %s (devices per node: %s): %w", o.DriverName, o.Published(), timeout, seen, err)
	}
	return nil
}

// SetTaints gives an installed driver the taints it adds on top of its
// layout: its DaemonSet's --taint changes, and the DaemonSet controller
// replaces the driver's pods one node at a time (claims they prepared stay
// prepared, see the driver's checkpoint), each of which publishes the new
// taints. The caller waits for the slices.
func SetTaints(ctx context.Context, client kubernetes.Interface, o Options, taints contract.AddedTaints) error {
	o = o.Defaults()
	ds, err := client.AppsV1().DaemonSets(o.Namespace).Get(ctx, "testdriver", metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("the driver's DaemonSet: %w", err)
	}
	cmd := ds.Spec.Template.Spec.Containers[0].Command
	found := false
	for i, arg := range cmd {
		if strings.HasPrefix(arg, "--taint=") {
			cmd[i], found = "--taint="+taints.String(), true
		}
	}
	if !found {
		return fmt.Errorf("the driver's DaemonSet in %s has no --taint flag to change: %v", o.Namespace, cmd)
	}
	_, err = client.AppsV1().DaemonSets(o.Namespace).Update(ctx, ds, metav1.UpdateOptions{})
	return err
}

// Uninstall removes what Install made and waits for the namespace to go, so a
// run leaves the cluster as it found it.
func Uninstall(ctx context.Context, client kubernetes.Interface, dyn dynamic.Interface, o Options) error {
	o = o.Defaults()
	var errs []string
	version, verr := ResourceVersion(client)
	if verr == nil {
		gvr := schema.GroupVersionResource{Group: "resource.k8s.io", Version: version, Resource: "deviceclasses"}
		for k := 0; k <= o.Slots; k++ {
			if err := dyn.Resource(gvr).Delete(ctx, contract.SlotClass(o.DeviceClass, k), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, err.Error())
			}
		}
	}
	name := o.Namespace + "-testdriver"
	for _, err := range []error{
		client.RbacV1().ClusterRoleBindings().Delete(ctx, name, metav1.DeleteOptions{}),
		client.RbacV1().ClusterRoles().Delete(ctx, name, metav1.DeleteOptions{}),
		client.CoreV1().Namespaces().Delete(ctx, o.Namespace, metav1.DeleteOptions{}),
	} {
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err.Error())
		}
	}
	err := wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := client.CoreV1().Namespaces().Get(ctx, o.Namespace, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		errs = append(errs, "namespace "+o.Namespace+" still terminating")
	}
	// The plugin's slices are owned by the Node objects, not the DaemonSet;
	// remove them so nothing is left behind.
	if verr == nil {
		gvr := schema.GroupVersionResource{Group: "resource.k8s.io", Version: version, Resource: "resourceslices"}
		dyn.Resource(gvr).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{FieldSelector: "spec.driver=" + o.DriverName})
	}
	if len(errs) > 0 {
		return fmt.Errorf("removing the test driver: %s", strings.Join(errs, "; "))
	}
	return nil
}

func create(ctx context.Context, client kubernetes.Interface, obj any) error {
	var err error
	switch o := obj.(type) {
	case *corev1.Namespace:
		_, err = client.CoreV1().Namespaces().Create(ctx, o, metav1.CreateOptions{})
	case *corev1.ServiceAccount:
		_, err = client.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	case *rbacv1.ClusterRole:
		_, err = client.RbacV1().ClusterRoles().Create(ctx, o, metav1.CreateOptions{})
	case *rbacv1.ClusterRoleBinding:
		_, err = client.RbacV1().ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{})
	case *appsv1.DaemonSet:
		_, err = client.AppsV1().DaemonSets(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	default:
		return fmt.Errorf("embedded manifest has an unsupported object %T", obj)
	}
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}
