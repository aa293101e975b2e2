// SPDX-License-Identifier: Apache-2.0

package suitejob

import (
	"bytes"
	"slices"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

var values = Values{Image: "kind-e2e/adminaccess-suite:abc", Namespace: "aa",
	Env: [][2]string{{"LABELS", "authz || allocation"}, {"ADMIN_CHECK", `env | grep -q "^x=$"`}}}

// Every object of the Job's manifest decodes strictly as the API type it
// names, and the Job is one a managed cluster runs: any schedulable node,
// results in an emptyDir, non-root under the restricted profile, the
// variables unchanged.
func TestJobManifestDecodes(t *testing.T) {
	data, err := Job(values)
	if err != nil {
		t.Fatal(err)
	}
	decoder := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()
	kinds := []string{}
	for _, doc := range bytes.Split(data, []byte("\n---\n")) {
		obj, gvk, err := decoder.Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("%v in:\n%s", err, doc)
		}
		kinds = append(kinds, gvk.Kind)
		switch o := obj.(type) {
		case *corev1.Namespace:
			if o.Labels["pod-security.kubernetes.io/enforce"] != "restricted" {
				t.Errorf("namespace labels %v", o.Labels)
			}
		case *batchv1.Job:
			checkJob(t, o)
		}
	}
	if !slices.Equal(kinds, []string{"Namespace", "ServiceAccount", "ClusterRoleBinding", "Job"}) {
		t.Errorf("kinds %v", kinds)
	}
}

func checkJob(t *testing.T, job *batchv1.Job) {
	t.Helper()
	pod := job.Spec.Template.Spec
	if job.Name != JobName || job.Namespace != "aa" || job.Spec.ActiveDeadlineSeconds == nil || *job.Spec.ActiveDeadlineSeconds != 7200 {
		t.Errorf("job %s/%s deadline %v", job.Namespace, job.Name, job.Spec.ActiveDeadlineSeconds)
	}
	if len(pod.NodeSelector) > 0 || len(pod.Tolerations) > 0 || pod.Affinity != nil {
		t.Errorf("the pod is pinned: selector %v, tolerations %v, affinity %v", pod.NodeSelector, pod.Tolerations, pod.Affinity)
	}
	for _, v := range pod.Volumes {
		if v.EmptyDir == nil {
			t.Errorf("volume %s is no emptyDir: %+v", v.Name, v.VolumeSource)
		}
	}
	if sc := pod.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser == 0 ||
		sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod security context %+v", sc)
	}
	names := []string{}
	for _, c := range pod.Containers {
		names = append(names, c.Name)
		sc := c.SecurityContext
		if c.Image != values.Image || sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
			sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || !mounts(c, "results", ResultsDir) {
			t.Errorf("container %s: image %s, security context %+v, mounts %v", c.Name, c.Image, sc, c.VolumeMounts)
		}
	}
	if !slices.Equal(names, []string{SuiteContainer, OutputContainer}) {
		t.Errorf("containers %v", names)
	}
	env := pod.Containers[0].Env
	if !hasEnv(env, "ADMIN_CHECK", `env | grep -q "^x=$"`) || !hasEnv(env, "RESULTS_DIR", ResultsDir) || !hasEnv(env, "LABELS", "authz || allocation") {
		t.Errorf("suite container env %v", env)
	}
}

func mounts(c corev1.Container, volume, path string) bool {
	return slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == volume && m.MountPath == path })
}

// The Sonobuoy plugin has the fields Sonobuoy's plugin manifest reads
// (sonobuoy-config, extra-volumes and a container spec), and nothing else.
func TestSonobuoyPluginDecodes(t *testing.T) {
	data, err := SonobuoyPlugin(values)
	if err != nil {
		t.Fatal(err)
	}
	var plugin struct {
		ExtraVolumes   []corev1.Volume `json:"extra-volumes"`
		SonobuoyConfig struct {
			Driver       string `json:"driver"`
			PluginName   string `json:"plugin-name"`
			ResultFormat string `json:"result-format"`
			Description  string `json:"description"`
		} `json:"sonobuoy-config"`
		Spec corev1.Container `json:"spec"`
	}
	if err := yaml.UnmarshalStrict(data, &plugin); err != nil {
		t.Fatal(err)
	}
	c := plugin.SonobuoyConfig
	if c.Driver != "Job" || c.PluginName == "" || c.ResultFormat != "junit" {
		t.Errorf("sonobuoy-config %+v", c)
	}
	if plugin.Spec.Image != values.Image || !hasEnv(plugin.Spec.Env, "RESULTS_DIR", "/tmp/sonobuoy/results") || !hasEnv(plugin.Spec.Env, "LABELS", "authz || allocation") {
		t.Errorf("spec %+v", plugin.Spec)
	}
	if sc := plugin.Spec.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || !hasEnv(plugin.Spec.Env, "TMPDIR", "/scratch") ||
		len(plugin.ExtraVolumes) != 1 || !mounts(plugin.Spec, plugin.ExtraVolumes[0].Name, "/scratch") {
		t.Errorf("non-root plugin: security context %+v, volumes %+v, mounts %v", sc, plugin.ExtraVolumes, plugin.Spec.VolumeMounts)
	}
}

// Only the variables that are set are carried, in the table's order.
func TestEnvironment(t *testing.T) {
	got := Environment(func(k string) string {
		return map[string]string{"FEATURES": "alpha", "DRIVER": "gpu.example.com", "HOME": "/root", "PROFILE": ""}[k]
	})
	if want := [][2]string{{"FEATURES", "alpha"}, {"DRIVER", "gpu.example.com"}}; !slices.Equal(got, want) {
		t.Errorf("Environment = %v, want %v", got, want)
	}
}

func hasEnv(env []corev1.EnvVar, name, value string) bool {
	for _, e := range env {
		if e.Name == name && e.Value == value {
			return true
		}
	}
	return false
}
