package toggle

import (
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const manifest = `apiVersion: v1
kind: Pod
metadata:
  name: kube-controller-manager
spec:
  containers:
  - command:
    - kube-controller-manager
    - --allocate-node-cidrs=true
    - --feature-gates=DRAAdminAccess=true,DynamicResourceAllocation=true
    - --use-service-account-credentials=true
    image: registry.k8s.io/kube-controller-manager:v1.35.4
    name: kube-controller-manager
`

func TestSetStaticPodGateChangesOnlyThatGate(t *testing.T) {
	out, err := SetStaticPodGate([]byte(manifest), "DRAAdminAccess", false)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(manifest, "DRAAdminAccess=true,DynamicResourceAllocation=true", "DRAAdminAccess=false,DynamicResourceAllocation=true", 1)
	if string(out) != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out, want)
	}
	gates, _ := StaticPodGates(out)
	if !reflect.DeepEqual(gates, map[string]bool{"DRAAdminAccess": false, "DynamicResourceAllocation": true}) {
		t.Fatalf("gates %v", gates)
	}
}

func TestSetStaticPodGateAddsTheFlag(t *testing.T) {
	noFlag := strings.Replace(manifest, "    - --feature-gates=DRAAdminAccess=true,DynamicResourceAllocation=true\n", "", 1)
	out, err := SetStaticPodGate([]byte(noFlag), "DRAAdminAccess", false)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "    - --use-service-account-credentials=true\n    - --feature-gates=DRAAdminAccess=false\n    image:") {
		t.Fatalf("flag not appended at the end of the command:\n%s", out)
	}
	// Still a valid pod whose command carries the flag.
	var pod struct {
		Spec struct {
			Containers []struct{ Command []string } `json:"containers"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(out, &pod); err != nil {
		t.Fatal(err)
	}
	cmd := pod.Spec.Containers[0].Command
	if cmd[len(cmd)-1] != "--feature-gates=DRAAdminAccess=false" {
		t.Fatalf("command %v", cmd)
	}
}

func TestSetStaticPodGateRejectsGarbage(t *testing.T) {
	if _, err := SetStaticPodGate([]byte("kind: Pod\n"), "X", true); err == nil {
		t.Fatal("want error for a manifest without command")
	}
	bad := strings.Replace(manifest, "DynamicResourceAllocation=true", "DynamicResourceAllocation", 1)
	if _, err := SetStaticPodGate([]byte(bad), "X", true); err == nil {
		t.Fatal("want error for a malformed flag")
	}
}

func TestSetKubeletGate(t *testing.T) {
	in := "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nfailCgroupV1: false\nfeatureGates:\n  DynamicResourceAllocation: true\n"
	out, err := SetKubeletGate([]byte(in), "DRAAdminAccess", false)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	yaml.Unmarshal(out, &doc)
	if !reflect.DeepEqual(doc["featureGates"], map[string]any{"DynamicResourceAllocation": true, "DRAAdminAccess": false}) || doc["failCgroupV1"] != false {
		t.Fatalf("config %v", doc)
	}
	if _, err := SetKubeletGate([]byte("kind: Pod\n"), "X", true); err == nil {
		t.Fatal("want error for a non-kubelet config")
	}
}

func TestSetStaticPodImageChangesOnlyTheImage(t *testing.T) {
	next := "registry.k8s.io/kube-controller-manager:v1.36.3"
	out, err := SetStaticPodImage([]byte(manifest), next)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(manifest, ":v1.35.4", ":v1.36.3", 1); string(out) != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out, want)
	}
	if _, err := SetStaticPodImage([]byte("kind: Pod\n"), next); err == nil {
		t.Fatal("a manifest without an image must be an error")
	}
}

func TestSetKubeletFieldKeepsTheRest(t *testing.T) {
	in := "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nfeatureGates:\n  DRAAdminAccess: true\n"
	out, err := SetKubeletField([]byte(in), "failCgroupV1", false)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["failCgroupV1"] != false || !reflect.DeepEqual(doc["featureGates"], map[string]any{"DRAAdminAccess": true}) {
		t.Fatalf("got %v", doc)
	}
	if _, err := SetKubeletField([]byte("kind: Pod\n"), "failCgroupV1", false); err == nil {
		t.Fatal("only a KubeletConfiguration may be edited")
	}
}

func TestDropUnknownKubeletFlagsKeepsWhatTheKubeletKnows(t *testing.T) {
	env := `KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=unix:///run/containerd/containerd.sock --node-ip=172.18.0.2 --pod-infra-container-image=registry.k8s.io/pause:3.10.1 --provider-id=kind://docker/x/y"` + "\n"
	help := "Usage:\n  kubelet [flags]\n\nFlags:\n      --container-runtime-endpoint string   The endpoint\n      --node-ip string   IP address\n      --provider-id string   Unique identifier\n  -h, --help   help for kubelet\n"
	out, dropped, err := DropUnknownKubeletFlags([]byte(env), help)
	if err != nil {
		t.Fatal(err)
	}
	want := `KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=unix:///run/containerd/containerd.sock --node-ip=172.18.0.2 --provider-id=kind://docker/x/y"` + "\n"
	if string(out) != want {
		t.Fatalf("got  %s\nwant %s", out, want)
	}
	if !reflect.DeepEqual(dropped, []string{"--pod-infra-container-image=registry.k8s.io/pause:3.10.1"}) {
		t.Fatalf("dropped %v", dropped)
	}
	// Nothing to drop: the file comes back unchanged.
	again, dropped, err := DropUnknownKubeletFlags(out, help)
	if err != nil || string(again) != want || len(dropped) != 0 {
		t.Fatalf("second pass: %s %v %v", again, dropped, err)
	}
	if _, _, err := DropUnknownKubeletFlags([]byte("OTHER=1\n"), help); err == nil {
		t.Fatal("a file without the kubeadm line must be an error")
	}
}
