// SPDX-License-Identifier: Apache-2.0

package testenv

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func hostPathPod(name string, labels map[string]string, args []string, paths ...string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "drivers", Labels: labels},
		Spec: corev1.PodSpec{NodeName: "node-a", Containers: []corev1.Container{{Name: "plugin", Image: "example.com/plugin:v1.2.0", Args: args}}}}
	for _, path := range paths {
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: path}}})
	}
	return p
}

// A driver's pod mounts its own plugin folder, or the registry while it
// names the driver; the registry alone, or another driver's folder, is
// not the driver's.
func TestIsDriverPod(t *testing.T) {
	const driver = "gpu.example.com"
	for _, c := range []struct {
		pod  *corev1.Pod
		want bool
	}{
		{hostPathPod("upstream-like", nil, nil, "/var/lib/kubelet/plugins_registry", "/var/lib/kubelet/plugins/gpu.example.com"), true},
		{hostPathPod("subfolder", nil, nil, "/var/lib/kubelet/plugins/gpu.example.com/sock/"), true},
		{hostPathPod("by-flag", nil, []string{"--driver-name=gpu.example.com"}, "/var/lib/kubelet/plugins_registry", "/var/lib/kubelet/plugins"), true},
		{hostPathPod("by-label", map[string]string{"driver": "gpu.example.com"}, nil, "/var/lib/kubelet/plugins_registry"), true},
		{hostPathPod("csi-node", nil, []string{"--csi-address=/csi/csi.sock"}, "/var/lib/kubelet/plugins_registry", "/var/lib/kubelet/plugins"), false},
		{hostPathPod("other-driver", nil, nil, "/var/lib/kubelet/plugins/gpu.example.com.other"), false},
		{hostPathPod("named-no-registry", nil, []string{"--driver-name=gpu.example.com"}), false},
	} {
		if got := isDriverPod(c.pod, driver); got != c.want {
			t.Errorf("isDriverPod(%s) = %t, want %t", c.pod.Name, got, c.want)
		}
	}
}

// The provenance names the namespace and how it was known, the pods, each
// container's image with its ID and tag, and the pods' version labels.
func TestDriverProvenance(t *testing.T) {
	if got := driverProvenance(nil, "given with DRIVER_NAMESPACE"); !reflect.DeepEqual(got, map[string]string{"driver pods": driverNotFound}) {
		t.Errorf("no pods: %v", got)
	}
	a := hostPathPod("plugin-a", map[string]string{"app.kubernetes.io/version": "1.2.0", "helm.sh/chart": "gpu-driver-1.2.0"}, nil)
	a.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "plugin", ImageID: "example.com/plugin@sha256:aa"}}
	b := a.DeepCopy()
	b.Name, b.Spec.NodeName = "plugin-b", "node-b"
	got := driverProvenance([]corev1.Pod{*b, *a}, "found")
	want := map[string]string{
		"driver namespace":                 "drivers (found)",
		"driver pods":                      "plugin-a on node-a, plugin-b on node-b",
		"driver image of container plugin": "example.com/plugin:v1.2.0 (example.com/plugin@sha256:aa), version v1.2.0",
		"driver version (pod labels)":      "app.kubernetes.io/version=1.2.0, helm.sh/chart=gpu-driver-1.2.0",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("driverProvenance:\n got %v\nwant %v", got, want)
	}
}

func TestImageTag(t *testing.T) {
	for ref, want := range map[string]string{
		"registry:5000/nvidia/driver:v0.3.1@sha256:ab": "v0.3.1",
		"registry:5000/nvidia/driver@sha256:ab":        "",
		"driver:latest":                                "",
		"driver":                                       "",
	} {
		if got := imageTag(ref); got != want {
			t.Errorf("imageTag(%q) = %q, want %q", ref, got, want)
		}
	}
}
