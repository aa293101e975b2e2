// SPDX-License-Identifier: Apache-2.0

package deploy

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kep5018/adminaccess-conformance/testdriver/contract"
)

func TestObjectsCarryImageDriverAndNodeName(t *testing.T) {
	o := Options{Image: "kind-e2e/testdriver:abc", Devices: 3}.Defaults()
	objs, err := Objects(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 5 {
		t.Fatalf("want namespace, SA, role, binding, daemonset; got %d", len(objs))
	}
	ds := objs[4].(*appsv1.DaemonSet)
	c := ds.Spec.Template.Spec.Containers[0]
	if c.Image != "kind-e2e/testdriver:abc" || c.ImagePullPolicy != corev1.PullIfNotPresent {
		t.Fatalf("image %s %s", c.Image, c.ImagePullPolicy)
	}
	cmd := strings.Join(c.Command, " ")
	if !strings.Contains(cmd, "--driver-name="+contract.DriverName) || !strings.Contains(cmd, "--devices=3") {
		t.Fatalf("command %s", cmd)
	}
	if c.Env[0].ValueFrom.FieldRef.FieldPath != "spec.nodeName" || !*c.SecurityContext.Privileged {
		t.Fatal("plugin needs its node name and privileges")
	}
	if ds.Spec.Template.Spec.Tolerations[0].Operator != corev1.TolerationOpExists {
		t.Fatal("the driver must run on the control-plane node too")
	}
	if objs[0].(*corev1.Namespace).Name != contract.Namespace {
		t.Fatal("namespace")
	}
}

// On a cluster the suite did not create, the driver keeps off the control
// plane: the affinity excludes the role's label, whatever it tolerates.
func TestWorkersOnly(t *testing.T) {
	for _, only := range []bool{false, true} {
		objs, err := Objects(Options{Image: "kind-e2e/testdriver:abc", WorkersOnly: only}.Defaults())
		if err != nil {
			t.Fatal(err)
		}
		a := objs[4].(*appsv1.DaemonSet).Spec.Template.Spec.Affinity
		if !only {
			if a != nil {
				t.Errorf("affinity %+v without WorkersOnly", a)
			}
			continue
		}
		terms := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
		if len(terms) != 1 || terms[0].MatchExpressions[0].Key != ControlPlaneLabel || terms[0].MatchExpressions[0].Operator != corev1.NodeSelectorOpDoesNotExist {
			t.Errorf("terms %+v", terms)
		}
	}
}

func TestDeviceClassSelectsTheDriverAtTheServedVersion(t *testing.T) {
	dc := DeviceClassObject(Options{}.Defaults(), "v1beta1")
	if dc.GetAPIVersion() != "resource.k8s.io/v1beta1" {
		t.Fatal(dc.GetAPIVersion())
	}
	sel := dc.Object["spec"].(map[string]any)["selectors"].([]any)[0].(map[string]any)["cel"].(map[string]any)["expression"]
	if sel != `device.driver == "`+contract.DriverName+`"` {
		t.Fatal(sel)
	}
}

func TestDriverReachesKubeAPIServerWhereTold(t *testing.T) {
	env := func(o Options) map[string]string {
		objs, err := Objects(o.Defaults())
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, e := range objs[4].(*appsv1.DaemonSet).Spec.Template.Spec.Containers[0].Env {
			out[e.Name] = e.Value
		}
		return out
	}
	got := env(Options{Image: "x", APIServerHost: "172.18.0.3", APIServerPort: "6443"})
	if got["KUBERNETES_SERVICE_HOST"] != "172.18.0.3" || got["KUBERNETES_SERVICE_PORT"] != "6443" {
		t.Fatalf("with an address the driver must be pointed at it: %v", got)
	}
	got = env(Options{Image: "x"})
	if _, ok := got["KUBERNETES_SERVICE_HOST"]; ok {
		t.Fatalf("without one it must keep the kubernetes Service: %v", got)
	}
}

func TestTheDriverIsToldItsAddedTaints(t *testing.T) {
	for taints, want := range map[string]contract.AddedTaints{
		"--taint=":                       nil,
		"--taint=noschedule-0=NoExecute": {"noschedule-0": "NoExecute"},
	} {
		objs, err := Objects(Options{Image: "x", Taints: want}.Defaults())
		if err != nil {
			t.Fatal(err)
		}
		cmd := objs[4].(*appsv1.DaemonSet).Spec.Template.Spec.Containers[0].Command
		if !slices.Contains(cmd, taints) {
			t.Errorf("taints %v: command %v lacks %q", want, cmd, taints)
		}
	}
}

// The release's counter shape reaches the driver: the partitionable layout
// published in the other release's shape never appears (see the driver's
// partitionable).
func TestTheDriverIsToldWhereTheCountersGo(t *testing.T) {
	for with, flag := range map[bool]string{false: "--counters-with-devices=false", true: "--counters-with-devices=true"} {
		objs, err := Objects(Options{Image: "x", Layout: contract.LayoutPartitionable, CountersWithDevices: with}.Defaults())
		if err != nil {
			t.Fatal(err)
		}
		cmd := objs[4].(*appsv1.DaemonSet).Spec.Template.Spec.Containers[0].Command
		if !slices.Contains(cmd, flag) {
			t.Errorf("counters with devices %t: command %v lacks %q", with, cmd, flag)
		}
	}
}

func TestTheDriversNamespaceSaysWhichRunInstalledItAndWhetherToKeepIt(t *testing.T) {
	objs, err := Objects(Options{Image: "x", RunID: "dra-e2e-1700000000", Kept: true}.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	labels := objs[0].(*corev1.Namespace).Labels
	if labels["app.kubernetes.io/managed-by"] != ManagedBy || labels[RunLabel] != "dra-e2e-1700000000" || labels[KeptLabel] != "true" {
		t.Errorf("namespace labels %v", labels)
	}
	if Existing(labels, true) != Kept {
		t.Error("a kept installation must read as kept")
	}
	objs, _ = Objects(Options{Image: "x", RunID: "r"}.Defaults())
	if got := Existing(objs[0].(*corev1.Namespace).Labels, true); got != Stale {
		t.Errorf("one a run did not keep, found by another: %v, want Stale", got)
	}
	if Existing(map[string]string{"team": "gpu"}, true) != NotOurs || Existing(nil, true) != NotOurs {
		t.Error("a namespace the suite did not label is not the suite's")
	}
	if Existing(nil, false) != NotThere {
		t.Error("nothing there")
	}
}

// With spare pools the suite's own class keeps to slot 0 and each spare
// pool's class to its slot, so no two classes share a device; the driver
// is told how many, and every node's count includes them.
func TestSparePoolsHaveClassesOfTheirOwn(t *testing.T) {
	o := Options{Slots: 2}.Defaults()
	expr := func(dc map[string]any) any {
		return dc["spec"].(map[string]any)["selectors"].([]any)[0].(map[string]any)["cel"].(map[string]any)["expression"]
	}
	attr := `device.attributes["` + contract.DriverName + `"].slot`
	if got := expr(DeviceClassObject(o, "v1").Object); got != `device.driver == "`+contract.DriverName+`" && `+attr+` == 0` {
		t.Fatal(got)
	}
	classes := SlotClassObjects(o, "v1")
	if len(classes) != 2 {
		t.Fatalf("%d slot classes", len(classes))
	}
	for i, dc := range classes {
		k := i + 1
		if name := dc.GetName(); name != contract.SlotClass(contract.DriverName, k) {
			t.Errorf("class %d is named %s", k, name)
		}
		if got := expr(dc.Object); got != `device.driver == "`+contract.DriverName+`" && `+attr+` == `+strconv.Itoa(k) {
			t.Errorf("class %d selects %s", k, got)
		}
	}
	if SlotClassObjects(Options{}.Defaults(), "v1") != nil {
		t.Error("a driver without spare pools has no slot classes")
	}
	if o.Published() != 3*contract.PlainDevices {
		t.Errorf("published per node: %d", o.Published())
	}
	objs, err := Objects(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range objs {
		if ds, ok := obj.(*appsv1.DaemonSet); ok && !slices.Contains(ds.Spec.Template.Spec.Containers[0].Command, "--slots=2") {
			t.Errorf("the driver is not told its slots: %v", ds.Spec.Template.Spec.Containers[0].Command)
		}
	}
}
