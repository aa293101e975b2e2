// SPDX-License-Identifier: Apache-2.0

// Package nodeconfig edits the files a kind node runs its Kubernetes
// components from: kubeadm's static pod manifests (read and written as a
// corev1.Pod: the --feature-gates flag, the image, a stamp that makes a new
// pod) and the kubelet's configuration and flags (a generic document: a newer
// kubelet's fields unknown to this module's types must survive an edit). Gate
// moves and release switches are both such edits. They are pure functions on
// file contents; package kindcluster reads and writes the files inside the
// nodes.
package nodeconfig

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	cliflag "k8s.io/component-base/cli/flag"
	"sigs.k8s.io/yaml"
)

const flagPrefix = "--feature-gates="

// ParseGates reads a --feature-gates value ("A=true,B=false") with the
// components' own flag type, so it accepts and refuses exactly what they do.
func ParseGates(value string) (map[string]bool, error) {
	gates := map[string]bool{}
	if err := cliflag.NewMapStringBool(&gates).Set(value); err != nil {
		return nil, fmt.Errorf("malformed feature gates %q: %w", value, err)
	}
	return gates, nil
}

// FormatGates writes a --feature-gates value, sorted, as the components'
// flag type prints it.
func FormatGates(gates map[string]bool) string {
	return cliflag.NewMapStringBool(&gates).String()
}

// readPod reads a static pod manifest as a corev1.Pod. Strictly: a field
// this module's types do not know would be lost on writing, so it is an
// error here rather than a silent change to the component.
func readPod(manifest []byte) (*corev1.Pod, error) {
	var pod corev1.Pod
	if err := yaml.UnmarshalStrict(manifest, &pod); err != nil {
		return nil, fmt.Errorf("static pod manifest: %w", err)
	}
	if pod.Kind != "Pod" || len(pod.Spec.Containers) != 1 {
		return nil, fmt.Errorf("static pod manifest: want a Pod with one container, got kind %q with %d", pod.Kind, len(pod.Spec.Containers))
	}
	return &pod, nil
}

// SetStaticPodGate returns the manifest with gate set to value in the
// container's --feature-gates flag (appended to the command when absent),
// other gates and every other argument kept in place.
func SetStaticPodGate(manifest []byte, gate string, value bool) ([]byte, error) {
	return EditStaticPodGates(manifest, map[string]bool{gate: value}, nil)
}

// EditStaticPodGates returns the manifest with each gate of set set to its
// value and each gate of unset taken out of the container's --feature-gates
// flag (the component then runs its default), every other gate and argument
// kept in place. A flag left empty goes; a missing one is appended.
func EditStaticPodGates(manifest []byte, set map[string]bool, unset []string) ([]byte, error) {
	pod, err := readPod(manifest)
	if err != nil {
		return nil, err
	}
	c := &pod.Spec.Containers[0]
	if len(c.Command) == 0 {
		return nil, fmt.Errorf("static pod manifest: the container has no command")
	}
	at := -1
	gates := map[string]bool{}
	for i, arg := range c.Command {
		if current, ok := strings.CutPrefix(arg, flagPrefix); ok {
			if gates, err = ParseGates(current); err != nil {
				return nil, err
			}
			at = i
			break
		}
	}
	for g, v := range set {
		gates[g] = v
	}
	for _, g := range unset {
		delete(gates, g)
	}
	switch {
	case at >= 0 && len(gates) == 0:
		c.Command = append(c.Command[:at], c.Command[at+1:]...)
	case at >= 0:
		c.Command[at] = flagPrefix + FormatGates(gates)
	case len(gates) > 0:
		c.Command = append(c.Command, flagPrefix+FormatGates(gates))
	}
	return yaml.Marshal(pod)
}

// SetStaticPodFlag returns the manifest with the container's --name flag
// set to value, or taken out where value is "" (appended where absent),
// every other argument kept in place.
func SetStaticPodFlag(manifest []byte, name, value string) ([]byte, error) {
	pod, err := readPod(manifest)
	if err != nil {
		return nil, err
	}
	c := &pod.Spec.Containers[0]
	prefix := "--" + name + "="
	var out []string
	found := false
	for _, arg := range c.Command {
		if !strings.HasPrefix(arg, prefix) {
			out = append(out, arg)
			continue
		}
		if value != "" && !found {
			out = append(out, prefix+value)
		}
		found = true
	}
	if !found && value != "" {
		out = append(out, prefix+value)
	}
	c.Command = out
	return yaml.Marshal(pod)
}

// StaticPodFlag is the value of the container's --name flag ("" where it
// has none).
func StaticPodFlag(manifest []byte, name string) (string, error) {
	pod, err := readPod(manifest)
	if err != nil {
		return "", err
	}
	return CommandFlag(pod.Spec.Containers[0].Command, name), nil
}

// CommandFlag is the value of --name in a command's arguments ("" where
// it has none).
func CommandFlag(args []string, name string) string {
	for _, arg := range args {
		if v, ok := strings.CutPrefix(arg, "--"+name+"="); ok {
			return v
		}
	}
	return ""
}

// WrittenAnnotation marks each manifest the suite writes with when it did.
const WrittenAnnotation = "e2e.kep5018.io/written"

// StampStaticPod returns the manifest with WrittenAnnotation set to stamp and
// the pod's UID set to uid.
//
// A static pod's UID is otherwise a hash of its manifest, so putting back a
// manifest the kubelet ran a moment ago (a gate moved off and on) would reuse
// the UID of a pod it is still forgetting, and the kubelet then starts it
// only at a later housekeeping pass (measured: 16 s): the caller gives each
// restart a new uid. Within one restart the uid stays, and a new stamp alone
// is then an update of the same pod, which makes the kubelet look again at
// whether it may start it (see kindcluster's startNewPods).
func StampStaticPod(manifest []byte, uid, stamp string) ([]byte, error) {
	pod, err := readPod(manifest)
	if err != nil {
		return nil, err
	}
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[WrittenAnnotation] = stamp
	pod.UID = types.UID(uid)
	return yaml.Marshal(pod)
}

// StaticPodUID reads the UID a static pod manifest sets ("": none, the
// kubelet derives one).
func StaticPodUID(manifest []byte) (string, error) {
	pod, err := readPod(manifest)
	if err != nil {
		return "", err
	}
	return string(pod.UID), nil
}

// PinStaticPodUID returns the manifest with the pod's UID set to uid and
// nothing else changed: given the UID the kubelet runs the pod under, the
// kubelet sees the same pod, unchanged.
func PinStaticPodUID(manifest []byte, uid string) ([]byte, error) {
	pod, err := readPod(manifest)
	if err != nil {
		return nil, err
	}
	pod.UID = types.UID(uid)
	return yaml.Marshal(pod)
}

// StaticPodGates reads the --feature-gates of a static pod manifest.
func StaticPodGates(manifest []byte) (map[string]bool, error) {
	pod, err := readPod(manifest)
	if err != nil {
		return nil, err
	}
	return CommandGates(pod.Spec.Containers[0].Command)
}

// CommandGates reads the --feature-gates of a command's arguments (none
// named where the flag is absent).
func CommandGates(args []string) (map[string]bool, error) {
	for _, arg := range args {
		if v, ok := strings.CutPrefix(arg, flagPrefix); ok {
			return ParseGates(v)
		}
	}
	return map[string]bool{}, nil
}

// KubeletGates reads the featureGates of a KubeletConfiguration.
func KubeletGates(config []byte) (map[string]bool, error) {
	doc, err := kubeletConfig(config)
	if err != nil {
		return nil, err
	}
	raw, _ := doc["featureGates"].(map[string]any)
	gates := map[string]bool{}
	for k, v := range raw {
		b, ok := v.(bool)
		if !ok {
			return nil, fmt.Errorf("kubelet config: featureGates.%s is %v, not a boolean", k, v)
		}
		gates[k] = b
	}
	return gates, nil
}

// SetKubeletGate returns the KubeletConfiguration with featureGates[gate] = value.
func SetKubeletGate(config []byte, gate string, value bool) ([]byte, error) {
	doc, err := kubeletConfig(config)
	if err != nil {
		return nil, err
	}
	gates, _ := doc["featureGates"].(map[string]any)
	if gates == nil {
		gates = map[string]any{}
	}
	gates[gate] = value
	doc["featureGates"] = gates
	return yaml.Marshal(doc)
}

// SetStaticPodImage returns the manifest running image instead; a release
// switch keeps every flag kubeadm wrote.
func SetStaticPodImage(manifest []byte, image string) ([]byte, error) {
	pod, err := readPod(manifest)
	if err != nil {
		return nil, err
	}
	pod.Spec.Containers[0].Image = image
	return yaml.Marshal(pod)
}

// StaticPodImage reads the image a static pod manifest runs.
func StaticPodImage(manifest []byte) (string, error) {
	pod, err := readPod(manifest)
	if err != nil {
		return "", err
	}
	return pod.Spec.Containers[0].Image, nil
}

// KubeletField reads a top-level field of a KubeletConfiguration (nil where
// it is not set).
func KubeletField(config []byte, field string) (any, error) {
	doc, err := kubeletConfig(config)
	if err != nil {
		return nil, err
	}
	return doc[field], nil
}

// SetKubeletField returns the KubeletConfiguration with a top-level field set.
func SetKubeletField(config []byte, field string, value any) ([]byte, error) {
	doc, err := kubeletConfig(config)
	if err != nil {
		return nil, err
	}
	doc[field] = value
	return yaml.Marshal(doc)
}

// kubeletConfig parses a KubeletConfiguration as a generic document, so that
// fields this module's kubelet types do not know survive an edit.
func kubeletConfig(config []byte) (map[string]any, error) {
	var doc map[string]any
	if err := yaml.Unmarshal(config, &doc); err != nil {
		return nil, fmt.Errorf("kubelet config: %w", err)
	}
	if doc["kind"] != "KubeletConfiguration" {
		return nil, fmt.Errorf("not a KubeletConfiguration (kind %v)", doc["kind"])
	}
	return doc, nil
}

// DropUnknownKubeletFlags removes from kubeadm's kubelet flags file
// (KUBELET_KUBEADM_ARGS="--a=b --c=d") every flag the kubelet's --help output
// does not list, as `kubeadm upgrade node` does when it rewrites the file for
// a new kubelet: 1.35 removed --pod-infra-container-image, which 1.34's
// kubeadm still wrote, and a kubelet refuses to start on an unknown flag.
func DropUnknownKubeletFlags(env []byte, help string) ([]byte, []string, error) {
	known := map[string]bool{}
	for _, f := range strings.Fields(help) {
		if name, ok := strings.CutPrefix(strings.TrimRight(f, ","), "--"); ok {
			known[strings.SplitN(name, "=", 2)[0]] = true
		}
	}
	if len(known) == 0 {
		return nil, nil, fmt.Errorf("the kubelet's --help lists no flags")
	}
	const key = "KUBELET_KUBEADM_ARGS="
	lines := strings.Split(string(env), "\n")
	var dropped []string
	found := false
	for i, line := range lines {
		value, ok := strings.CutPrefix(line, key)
		if !ok {
			continue
		}
		found = true
		var kept []string
		for _, arg := range strings.Fields(strings.Trim(value, `"`)) {
			name := strings.SplitN(strings.TrimPrefix(arg, "--"), "=", 2)[0]
			if strings.HasPrefix(arg, "--") && !known[name] {
				dropped = append(dropped, arg)
				continue
			}
			kept = append(kept, arg)
		}
		lines[i] = key + `"` + strings.Join(kept, " ") + `"`
	}
	if !found {
		return nil, nil, fmt.Errorf("no %s line in the kubelet flags file", strings.TrimSuffix(key, "="))
	}
	return []byte(strings.Join(lines, "\n")), dropped, nil
}
