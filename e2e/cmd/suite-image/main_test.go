package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
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
// names, and the container carries the variables unchanged.
func TestJobManifestDecodes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "incluster.yaml")
	if err := render(path, jobTemplate, values); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	decoder := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()
	kinds := []string{}
	for _, doc := range bytes.Split(data, []byte("\n---\n")) {
		obj, gvk, err := decoder.Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("%v in:\n%s", err, doc)
		}
		kinds = append(kinds, gvk.Kind)
		if job, ok := obj.(*batchv1.Job); ok {
			env := job.Spec.Template.Spec.Containers[0].Env
			if job.Spec.Template.Spec.Containers[0].Image != values.Image || !hasEnv(env, "ADMIN_CHECK", `env | grep -q "^x=$"`) || !hasEnv(env, "RESULTS_DIR", "/results") {
				t.Errorf("job container %+v", job.Spec.Template.Spec.Containers[0])
			}
		}
	}
	if strings.Join(kinds, ",") != "Namespace,ServiceAccount,ClusterRoleBinding,Job" {
		t.Errorf("kinds %v", kinds)
	}
}

// The Sonobuoy plugin has the fields Sonobuoy's plugin manifest reads
// (sonobuoy-config and a container spec), and nothing else.
func TestSonobuoyPluginDecodes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plugin.yaml")
	if err := render(path, pluginTemplate, values); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	var plugin struct {
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
}

func hasEnv(env []corev1.EnvVar, name, value string) bool {
	for _, e := range env {
		if e.Name == name && e.Value == value {
			return true
		}
	}
	return false
}
