// SPDX-License-Identifier: Apache-2.0

package nodeconfig

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
)

// realManifests are the static pod manifests kubeadm writes on every
// supported release (testdata/<minor>, from hack/capture-manifests.sh).
func realManifests(t *testing.T) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob("testdata/*/*.yaml")
	for _, m := range release.Minors() {
		if got, _ := filepath.Glob("testdata/" + m + "/*.yaml"); len(got) != 3 {
			t.Fatalf("want the three manifests of Kubernetes %s in testdata/%s (hack/capture-manifests.sh), found %v", m, m, got)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[f] = data
	}
	return out
}

func mustPod(t *testing.T, manifest []byte) *corev1.Pod {
	t.Helper()
	pod, err := readPod(manifest)
	if err != nil {
		t.Fatal(err)
	}
	return pod
}

// withoutArg is the command without the one argument starting with prefix.
func withoutArg(cmd []string, prefix string) []string {
	var out []string
	for _, a := range cmd {
		if !strings.HasPrefix(a, prefix) {
			out = append(out, a)
		}
	}
	return out
}

func TestSetStaticPodGateOnEveryReleasesManifests(t *testing.T) {
	for name, manifest := range realManifests(t) {
		before := mustPod(t, manifest)
		off, err := SetStaticPodGate(manifest, "DRAAdminAccess", false)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		after := mustPod(t, off)
		if gates, _ := StaticPodGates(off); !reflect.DeepEqual(gates, map[string]bool{"DRAAdminAccess": false}) {
			t.Errorf("%s: gates after the edit %v", name, gates)
		}
		// Only the flag differs: every other argument in place, the rest of the pod equal.
		if got, want := withoutArg(after.Spec.Containers[0].Command, flagPrefix), before.Spec.Containers[0].Command; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: other arguments changed:\n got %v\nwant %v", name, got, want)
		}
		after.Spec.Containers[0].Command = before.Spec.Containers[0].Command
		if !reflect.DeepEqual(after, before) {
			t.Errorf("%s: the edit changed more than the command", name)
		}
		// A second gate joins the first in the same flag, sorted.
		both, err := SetStaticPodGate(off, "AnotherGate", true)
		if err != nil {
			t.Fatal(err)
		}
		cmd := mustPod(t, both).Spec.Containers[0].Command
		if cmd[len(cmd)-1] != "--feature-gates=AnotherGate=true,DRAAdminAccess=false" || len(cmd) != len(before.Spec.Containers[0].Command)+1 {
			t.Errorf("%s: command after two gates %v", name, cmd)
		}
	}
}

func TestSetStaticPodImageOnEveryReleasesManifests(t *testing.T) {
	for name, manifest := range realManifests(t) {
		before := mustPod(t, manifest)
		out, err := SetStaticPodImage(manifest, "registry.k8s.io/next:v9.9.9")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		after := mustPod(t, out)
		if after.Spec.Containers[0].Image != "registry.k8s.io/next:v9.9.9" {
			t.Errorf("%s: image %s", name, after.Spec.Containers[0].Image)
		}
		if got, err := StaticPodImage(out); err != nil || got != "registry.k8s.io/next:v9.9.9" {
			t.Errorf("%s: StaticPodImage read %q, %v", name, got, err)
		}
		if got, _ := StaticPodImage(manifest); got != before.Spec.Containers[0].Image {
			t.Errorf("%s: StaticPodImage read %q of the manifest as kubeadm wrote it", name, got)
		}
		after.Spec.Containers[0].Image = before.Spec.Containers[0].Image
		if !reflect.DeepEqual(after, before) {
			t.Errorf("%s: the edit changed more than the image", name)
		}
	}
}

func TestStaticPodEditsRefuseWhatTheyCannotKeep(t *testing.T) {
	if _, err := SetStaticPodGate([]byte("apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: x\n"), "X", true); err == nil {
		t.Fatal("want an error for a container without a command")
	}
	unknown := "apiVersion: v1\nkind: Pod\nspec:\n  futureField: 1\n  containers:\n  - name: x\n    command: [x]\n"
	if _, err := SetStaticPodGate([]byte(unknown), "X", true); err == nil || !strings.Contains(err.Error(), "futureField") {
		t.Fatalf("a field the types do not know must be refused, not dropped: %v", err)
	}
	bad := "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: x\n    command: [x, --feature-gates=DynamicResourceAllocation]\n"
	if _, err := SetStaticPodGate([]byte(bad), "X", true); err == nil {
		t.Fatal("want an error for a malformed flag")
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
	if v, err := KubeletField(out, "failCgroupV1"); err != nil || v != false {
		t.Fatalf("KubeletField read %v, %v of what SetKubeletField wrote", v, err)
	}
	if v, err := KubeletField([]byte(in), "failCgroupV1"); err != nil || v != nil {
		t.Fatalf("KubeletField read %v, %v where the field is not set", v, err)
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

func TestStampStaticPodSetsTheUIDAndTheStampOnly(t *testing.T) {
	for name, manifest := range realManifests(t) {
		a, err := StampStaticPod(manifest, "0123456789abcdef0123456789abcdef", "1")
		if err != nil {
			t.Fatal(err)
		}
		// A later stamp of the same restart keeps its uid; a new restart's
		// uid replaces the one before.
		b, _ := StampStaticPod(a, "0123456789abcdef0123456789abcdef", "2")
		c, _ := StampStaticPod(b, "fedcba9876543210fedcba9876543210", "3")
		pa, pb, pc := mustPod(t, a), mustPod(t, b), mustPod(t, c)
		if pa.Annotations[WrittenAnnotation] != "1" || pb.Annotations[WrittenAnnotation] != "2" || pc.Annotations[WrittenAnnotation] != "3" {
			t.Fatalf("%s: stamps %v %v %v", name, pa.Annotations, pb.Annotations, pc.Annotations)
		}
		if pa.UID != "0123456789abcdef0123456789abcdef" || pb.UID != pa.UID || pc.UID != "fedcba9876543210fedcba9876543210" {
			t.Fatalf("%s: uids %q %q %q", name, pa.UID, pb.UID, pc.UID)
		}
		delete(pc.Annotations, WrittenAnnotation)
		pc.UID = ""
		before := mustPod(t, manifest)
		if len(pc.Annotations) == 0 {
			pc.Annotations = before.Annotations
		}
		if !reflect.DeepEqual(pc, before) {
			t.Errorf("%s: the stamp changed more than its annotation and the uid", name)
		}
	}
}

func TestPinStaticPodUIDSetsTheUIDOnly(t *testing.T) {
	for name, manifest := range realManifests(t) {
		if uid, err := StaticPodUID(manifest); err != nil || uid != "" {
			t.Fatalf("%s: kubeadm's manifest has uid %q (%v)", name, uid, err)
		}
		pinned, err := PinStaticPodUID(manifest, "0123456789abcdef0123456789abcdef")
		if err != nil {
			t.Fatal(err)
		}
		if uid, _ := StaticPodUID(pinned); uid != "0123456789abcdef0123456789abcdef" {
			t.Fatalf("%s: uid %q after pinning", name, uid)
		}
		after := mustPod(t, pinned)
		after.UID = ""
		if !reflect.DeepEqual(after, mustPod(t, manifest)) {
			t.Errorf("%s: pinning changed more than the uid", name)
		}
	}
}

func TestKubeletGatesReadsWhatSetKubeletGateWrote(t *testing.T) {
	in := "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nsyncFrequency: 10s\n"
	if gates, err := KubeletGates([]byte(in)); err != nil || len(gates) != 0 {
		t.Fatalf("no featureGates: %v, %v", gates, err)
	}
	out, err := SetKubeletGate([]byte(in), "DRAAdminAccess", false)
	if err != nil {
		t.Fatal(err)
	}
	if gates, err := KubeletGates(out); err != nil || !reflect.DeepEqual(gates, map[string]bool{"DRAAdminAccess": false}) {
		t.Fatalf("gates %v, %v", gates, err)
	}
	if _, err := KubeletGates([]byte("kind: KubeletConfiguration\nfeatureGates:\n  X: yes-please\n")); err == nil {
		t.Fatal("a gate that is not a boolean must be an error")
	}
}

func TestEditStaticPodGatesSetsAndTakesBackOnlyTheGatesNamed(t *testing.T) {
	for name, manifest := range realManifests(t) {
		before := mustPod(t, manifest)
		withAdmin, err := SetStaticPodGate(manifest, "DRAAdminAccess", true)
		if err != nil {
			t.Fatal(err)
		}
		moved, err := EditStaticPodGates(withAdmin, map[string]bool{"DRAConsumableCapacity": false, "DRADeviceBindingConditions": false}, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := map[string]bool{"DRAAdminAccess": true, "DRAConsumableCapacity": false, "DRADeviceBindingConditions": false}
		if gates, _ := StaticPodGates(moved); !reflect.DeepEqual(gates, want) {
			t.Errorf("%s: gates after the move %v, want %v", name, gates, want)
		}
		back, err := EditStaticPodGates(moved, nil, []string{"DRAConsumableCapacity", "DRADeviceBindingConditions", "DRAListTypeAttributes"})
		if err != nil {
			t.Fatal(err)
		}
		if gates, _ := StaticPodGates(back); !reflect.DeepEqual(gates, map[string]bool{"DRAAdminAccess": true}) {
			t.Errorf("%s: gates after the move back %v", name, gates)
		}
		// Taking the last gate out removes the flag: the command is kubeadm's again.
		bare, err := EditStaticPodGates(back, nil, []string{"DRAAdminAccess"})
		if err != nil {
			t.Fatal(err)
		}
		if got := mustPod(t, bare); !reflect.DeepEqual(got, before) {
			t.Errorf("%s: with no gate left the pod differs from kubeadm's: %v", name, got.Spec.Containers[0].Command)
		}
	}
}

func TestSetStaticPodFlagAddsReplacesAndRemovesOneFlag(t *testing.T) {
	for name, manifest := range realManifests(t) {
		before := mustPod(t, manifest)
		with, err := SetStaticPodFlag(manifest, "vmodule", "allocator*=5")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		cmd := mustPod(t, with).Spec.Containers[0].Command
		if cmd[len(cmd)-1] != "--vmodule=allocator*=5" || len(cmd) != len(before.Spec.Containers[0].Command)+1 {
			t.Errorf("%s: command with the flag %v", name, cmd)
		}
		again, _ := SetStaticPodFlag(with, "vmodule", "other=2")
		if cmd := mustPod(t, again).Spec.Containers[0].Command; cmd[len(cmd)-1] != "--vmodule=other=2" || len(cmd) != len(before.Spec.Containers[0].Command)+1 {
			t.Errorf("%s: command with the flag replaced %v", name, cmd)
		}
		without, _ := SetStaticPodFlag(again, "vmodule", "")
		if got := mustPod(t, without); !reflect.DeepEqual(got, before) {
			t.Errorf("%s: the flag taken out leaves %v", name, got.Spec.Containers[0].Command)
		}
	}
}

func TestCommandFlagsAreReadAsTheComponentsReadThem(t *testing.T) {
	args := []string{"kube-scheduler", "--vmodule=allocator*=5", "--feature-gates=A=true,B=false"}
	if got := CommandFlag(args, "vmodule"); got != "allocator*=5" {
		t.Errorf("vmodule %q", got)
	}
	if got := CommandFlag(args, "v"); got != "" {
		t.Errorf("an absent flag reads %q", got)
	}
	if got, err := CommandGates(args); err != nil || !reflect.DeepEqual(got, map[string]bool{"A": true, "B": false}) {
		t.Errorf("gates %v %v", got, err)
	}
	if got, err := CommandGates(args[:2]); err != nil || len(got) != 0 {
		t.Errorf("no flag is no gate: %v %v", got, err)
	}
}
