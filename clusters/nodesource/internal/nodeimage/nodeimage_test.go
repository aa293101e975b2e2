// SPDX-License-Identifier: Apache-2.0

package nodeimage

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
)

func TestParseKubeadmConstants(t *testing.T) {
	src := "const (\n\tDefaultEtcdVersion = \"3.6.6-0\"\n)\nconst (\n\tCoreDNSVersion = \"v1.13.1\"\n\tPauseVersion = \"3.10.1\"\n)"
	etcd, coredns, pause, err := ParseKubeadmConstants(src)
	if err != nil || etcd != "3.6.6-0" || coredns != "v1.13.1" || pause != "3.10.1" {
		t.Fatalf("got %q %q %q %v", etcd, coredns, pause, err)
	}
	if _, _, _, err := ParseKubeadmConstants("nothing"); err == nil {
		t.Fatal("want error")
	}
	rec := Recipe{EtcdTag: "3.5.24-0"}
	if rec.EtcdVersion() != "v3.5.24" {
		t.Fatalf("EtcdVersion %s", rec.EtcdVersion())
	}
}

func TestRecipeTagIsStableAndVersioned(t *testing.T) {
	r, _ := release.Get("1.35")
	rec := Recipe{Release: r, EtcdTag: "3.6.6-0", CoreDNSTag: "v1.13.1", PauseTag: "3.10.1"}
	a, err := rec.Tag()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := rec.Tag()
	if a != b || !strings.HasPrefix(a, "kind-e2e/node:v1.35.8-") {
		t.Fatalf("tags %q %q", a, b)
	}
	rec.EtcdTag = "3.6.7-0"
	if c, _ := rec.Tag(); c == a {
		t.Fatal("a different etcd must give a different tag")
	}
}

func TestMirrorFromSources(t *testing.T) {
	deb822 := "Types: deb\nURIs: http://mirror.example/debian\nSuites: bookworm\n\nTypes: deb\nURIs: http://mirror.example/debian-security\n"
	if got := mirrorFromSources(deb822); got != "http://mirror.example/debian" {
		t.Fatalf("deb822: %q", got)
	}
	oneLine := "deb [signed-by=/k.gpg] http://m.example/debian/ bookworm main\n"
	if got := mirrorFromSources(oneLine); got != "http://m.example/debian" {
		t.Fatalf("one-line: %q", got)
	}
	if got := mirrorFromSources("deb http://other.example/apt stable main\n"); got != "" {
		t.Fatalf("non-Debian source picked: %q", got)
	}
}

func TestParseLDD(t *testing.T) {
	out := "\tlinux-vdso.so.1 (0x00007ffd)\n\tlibnftables.so.1 => /lib/x86_64-linux-gnu/libnftables.so.1 (0x7f)\n\t/lib64/ld-linux-x86-64.so.2 (0x7f)\n"
	want := []string{"/lib/x86_64-linux-gnu/libnftables.so.1", "/lib64/ld-linux-x86-64.so.2"}
	if got := ParseLDD(out); !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseLDD = %v", got)
	}
}

func TestKubernetesModulePinsStagingTwins(t *testing.T) {
	dir := t.TempDir()
	goMod := "module k8s.io/kubernetes\n\nreplace (\n\tk8s.io/api => ./staging/src/k8s.io/api\n\tk8s.io/kubelet => ./staging/src/k8s.io/kubelet\n\tgithub.com/x/y => github.com/x/y v1.0.0\n)\n"
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte(goMod), 0o644)
	m, err := kubernetesModule(release.Release{Minor: "1.35", Version: "1.35.4"}, dir, "/out", kubernetesCommands)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"k8s.io/api": "k8s.io/api v0.35.4", "k8s.io/kubelet": "k8s.io/kubelet v0.35.4"}
	if !reflect.DeepEqual(m.Replace, want) {
		t.Fatalf("replace = %v", m.Replace)
	}
	for _, want := range []string{"k8s.io/component-base/version.gitVersion=v1.35.4", "k8s.io/client-go/pkg/version.gitMinor=35"} {
		if !strings.Contains(m.LDFlags, want) {
			t.Errorf("ldflags lack %s", want)
		}
	}
	mod := m.goMod()
	if !strings.Contains(mod, "require k8s.io/kubernetes v1.35.4") || !strings.Contains(mod, "\tk8s.io/api => k8s.io/api v0.35.4\n") {
		t.Fatalf("go.mod:\n%s", mod)
	}
}
