// SPDX-License-Identifier: Apache-2.0

package nodesource

import (
	"archive/tar"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kep5018/adminaccess-conformance/clusters/profile"
	"github.com/kep5018/adminaccess-conformance/clusters/release"
)

func TestControlPlaneRefsPicksTheVersionAsked(t *testing.T) {
	list := strings.Join([]string{
		"registry.k8s.io/coredns/coredns:v1.13.1",
		"registry.k8s.io/kube-apiserver:v1.35.4",
		"registry.k8s.io/kube-apiserver:v1.36.3",
		"registry.k8s.io/kube-apiserver@sha256:0123",
		"registry.k8s.io/kube-controller-manager-amd64:v1.36.3",
		"registry.k8s.io/kube-scheduler:v1.36.3",
		"registry.k8s.io/kube-proxy:v1.36.3",
	}, "\n")
	refs, err := ControlPlaneRefs(list, "v1.36.3")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"registry.k8s.io/kube-apiserver:v1.36.3", "registry.k8s.io/kube-controller-manager-amd64:v1.36.3", "registry.k8s.io/kube-scheduler:v1.36.3"}
	if !reflect.DeepEqual(refs, want) {
		t.Fatalf("got %v, want %v", refs, want)
	}
}

func TestControlPlaneRefsNamesWhatIsMissing(t *testing.T) {
	_, err := ControlPlaneRefs("registry.k8s.io/kube-apiserver:v1.36.3\nregistry.k8s.io/kube-scheduler:v1.35.4\n", "v1.36.3")
	if err == nil || !strings.Contains(err.Error(), "kube-controller-manager:v1.36.3, kube-scheduler:v1.36.3") {
		t.Fatalf("error %v", err)
	}
}

func TestCheckTarFindsATruncatedArchive(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	w := tar.NewWriter(&buf)
	body := bytes.Repeat([]byte("layer"), 4000)
	w.WriteHeader(&tar.Header{Name: "blobs/sha256/00", Mode: 0o644, Size: int64(len(body))})
	w.Write(body)
	w.Close()
	whole, cut := filepath.Join(dir, "whole.tar"), filepath.Join(dir, "cut.tar")
	os.WriteFile(whole, buf.Bytes(), 0o644)
	os.WriteFile(cut, buf.Bytes()[:buf.Len()-6233], 0o644)
	if err := checkTar(whole); err != nil {
		t.Fatalf("whole archive: %v", err)
	}
	if err := checkTar(cut); err == nil {
		t.Fatal("a truncated archive must be refused")
	}
}

// wholeBits writes release bits of r into dir: a kubelet and a small
// archive that reads to its end (returned, for tests that cut it).
func wholeBits(t *testing.T, r release.Release, dir string) (*ReleaseBits, []byte) {
	t.Helper()
	b := &ReleaseBits{Release: r, Dir: dir, Images: map[profile.Component]string{
		profile.APIServer: "a", profile.ControllerManager: "c", profile.Scheduler: "s"}}
	var archive bytes.Buffer
	tw := tar.NewWriter(&archive)
	tw.WriteHeader(&tar.Header{Name: "index.json", Mode: 0o644, Size: 2})
	tw.Write([]byte("{}"))
	tw.Close()
	if err := errors.Join(os.WriteFile(b.Kubelet(), []byte("binary"), 0o755), os.WriteFile(b.Archive(), archive.Bytes(), 0o644)); err != nil {
		t.Fatal(err)
	}
	return b, archive.Bytes()
}

func TestCachedBitsOnlyForTheSameImageAndWhole(t *testing.T) {
	dir := t.TempDir()
	r, err := release.Get("1.36")
	if err != nil {
		t.Fatal(err)
	}
	b, archive := wholeBits(t, r, dir)
	if err := saveBits(b, "sha256:one"); err != nil {
		t.Fatal(err)
	}
	if got, ok := cachedBits(dir, "sha256:one", r); !ok || got.Images[profile.Scheduler] != "s" {
		t.Fatalf("same image: want the cached bits, got %+v, %t", got, ok)
	}
	if _, ok := cachedBits(dir, "sha256:two", r); ok {
		t.Fatal("another image must be extracted again")
	}
	os.WriteFile(b.Archive(), archive[:513], 0o644)
	if _, ok := cachedBits(dir, "sha256:one", r); ok {
		t.Fatal("a cut archive must be extracted again")
	}
}
