// SPDX-License-Identifier: Apache-2.0

package testenv

import (
	"context"
	"fmt"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// A vendor signs a report that names what ran: the driver's pods, their
// images and versions, and, in the artifacts, their logs. The pods are in
// DRIVER_NAMESPACE, or else found by what every DRA kubelet plugin needs
// from its node.

const (
	// kubeletPluginsDir is where kubelet's DRA plugins keep their socket,
	// one folder per driver name (kubeletplugin.KubeletPluginsDir; the
	// helper's default data folder is <this>/<driver>).
	kubeletPluginsDir = "/var/lib/kubelet/plugins"
	// kubeletRegistryDir is where every kubelet plugin, DRA or CSI,
	// registers (kubeletplugin.KubeletRegistryDir).
	kubeletRegistryDir = "/var/lib/kubelet/plugins_registry"
)

// driverNotFound is the provenance of a run whose driver pods were
// neither given nor found.
const driverNotFound = "driver pods not found (give DRIVER_NAMESPACE)"

// isDriverPod says whether pod is a kubelet plugin of driver, by one of
// two marks:
//   - a hostPath volume at kubeletPluginsDir/<driver> or inside it: the
//     plugin's own socket folder, which no other driver's pod mounts.
//     Upstream's test driver is deployed so (its e2e manifest
//     test/e2e/testing-manifests/dra/dra-test-driver-proxy.yaml, and
//     hack/upstream-driver/deploy.yaml.tmpl here).
//   - a hostPath volume at kubeletRegistryDir together with the driver's
//     whole name in the pod's name, a label's value, or a container's
//     command, arguments or variables: drivers that mount all of
//     kubeletPluginsDir instead are found by the name they are started
//     with (--driver-name=…). The registry alone would also take CSI node
//     plugins, and a part of the name other drivers of one vendor.
func isDriverPod(pod *corev1.Pod, driver string) bool {
	own := path.Join(kubeletPluginsDir, driver)
	registry := false
	for _, v := range pod.Spec.Volumes {
		if v.HostPath == nil {
			continue
		}
		p := path.Clean(v.HostPath.Path)
		if p == own || strings.HasPrefix(p, own+"/") {
			return true
		}
		registry = registry || p == kubeletRegistryDir
	}
	return registry && namesDriver(pod, driver)
}

// namesDriver: the driver's name is in the pod's name, a label's value,
// or a container's command, arguments or variables.
func namesDriver(pod *corev1.Pod, driver string) bool {
	texts := []string{pod.Name}
	for _, v := range pod.Labels {
		texts = append(texts, v)
	}
	for _, c := range append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
		texts = append(texts, c.Command...)
		texts = append(texts, c.Args...)
		for _, e := range c.Env {
			texts = append(texts, e.Value)
		}
	}
	for _, t := range texts {
		if strings.Contains(t, driver) {
			return true
		}
	}
	return false
}

// Pods are the driver's pods and how they were found: every pod of
// DriverNamespace where it is given (a controller beside the kubelet
// plugins is the driver's too), else the kubelet plugins (isDriverPod) on
// the nodes the driver publishes on. None found is no error.
func (v *VendorDriver) Pods(ctx context.Context, client kubernetes.Interface) ([]corev1.Pod, string, error) {
	if v.DriverNamespace != "" {
		list, err := client.CoreV1().Pods(v.DriverNamespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, "", fmt.Errorf("DRIVER_NAMESPACE=%s: listing its pods: %w", v.DriverNamespace, err)
		}
		return list.Items, "given with DRIVER_NAMESPACE", nil
	}
	list, err := client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, "", fmt.Errorf("listing pods, to find the pods of DRIVER=%s (or give DRIVER_NAMESPACE): %w", v.Driver, err)
	}
	nodes := map[string]bool{}
	for _, n := range v.PublishedNodes() {
		nodes[n] = true
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if nodes[p.Spec.NodeName] && isDriverPod(&p, v.Driver) {
			out = append(out, p)
		}
	}
	return out, "found by their kubelet plugin folder " + path.Join(kubeletPluginsDir, v.Driver), nil
}

// checkDriverNamespace refuses a DRIVER_NAMESPACE that holds no pod: the
// provenance would name no driver though the user named its place.
func checkDriverNamespace(ctx context.Context, client kubernetes.Interface, driver, namespace string) error {
	if namespace == "" {
		return nil
	}
	pods, _, err := (&VendorDriver{Driver: driver, DriverNamespace: namespace}).Pods(ctx, client)
	if err != nil {
		return err
	}
	if len(pods) == 0 {
		return fmt.Errorf("DRIVER_NAMESPACE=%s has no pods: give the namespace the pods of DRIVER=%s run in (kubectl get pods -A -o wide lists them), "+
			"or leave it out to find them by their kubelet plugin folder", namespace, driver)
	}
	return nil
}

// CheckDriverNamespace checks, without a cluster, that DRIVER_NAMESPACE
// goes with a driver of the user's own.
func CheckDriverNamespace(driver, namespace string) error {
	if namespace != "" && driver == "" {
		return fmt.Errorf("DRIVER_NAMESPACE=%s names where a driver of your own runs: give DRIVER and DEVICE_CLASS too", namespace)
	}
	return nil
}

// driverProvenance is what the report says of the driver's pods: their
// namespace and how it was known, the pods, each container's image with
// the ID it ran (pod status) and its version where the image's tag or the
// pods' app.kubernetes.io/version and helm.sh/chart labels name one.
func driverProvenance(pods []corev1.Pod, how string) map[string]string {
	if len(pods) == 0 {
		return map[string]string{"driver pods": driverNotFound}
	}
	namespaces, names, versions := map[string]bool{}, []string{}, map[string]bool{}
	images := map[string]map[string]bool{} // container -> its image lines
	for _, p := range pods {
		namespaces[p.Namespace] = true
		names = append(names, p.Name+" on "+p.Spec.NodeName)
		for _, l := range []string{"app.kubernetes.io/version", "helm.sh/chart"} {
			if val := p.Labels[l]; val != "" {
				versions[l+"="+val] = true
			}
		}
		ids := map[string]string{}
		for _, st := range append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
			ids[st.Name] = st.ImageID
		}
		for _, c := range append(append([]corev1.Container{}, p.Spec.InitContainers...), p.Spec.Containers...) {
			line := c.Image
			if id := ids[c.Name]; id != "" {
				line += " (" + id + ")"
			}
			if tag := imageTag(c.Image); tag != "" {
				line += ", version " + tag
			}
			if images[c.Name] == nil {
				images[c.Name] = map[string]bool{}
			}
			images[c.Name][line] = true
		}
	}
	sort.Strings(names)
	out := map[string]string{
		"driver namespace": strings.Join(slices.Sorted(maps.Keys(namespaces)), ", ") + " (" + how + ")",
		"driver pods":      strings.Join(names, ", "),
	}
	for c, lines := range images {
		out["driver image of container "+c] = strings.Join(slices.Sorted(maps.Keys(lines)), "; ")
	}
	if len(versions) > 0 {
		out["driver version (pod labels)"] = strings.Join(slices.Sorted(maps.Keys(versions)), ", ")
	}
	return out
}

// imageTag is the tag of an image reference ("v0.3.1" of
// "registry:5000/nvidia/driver:v0.3.1@sha256:…"); "" where it has none or
// "latest", which names no version.
func imageTag(ref string) string {
	ref, _, _ = strings.Cut(ref, "@")
	last := ref[strings.LastIndex(ref, "/")+1:]
	_, tag, ok := strings.Cut(last, ":")
	if !ok || tag == "latest" {
		return ""
	}
	return tag
}
