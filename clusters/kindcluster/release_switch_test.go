package kindcluster

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
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
