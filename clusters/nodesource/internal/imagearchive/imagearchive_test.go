// SPDX-License-Identifier: Apache-2.0

package imagearchive

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// sample is an image with a host file, literal data, a relative symlink and
// nested parents, as the node images and the driver's image have.
func sample(t *testing.T) Image {
	bin := filepath.Join(t.TempDir(), "tool")
	if err := os.WriteFile(bin, []byte("#!binary"), 0o600); err != nil {
		t.Fatal(err)
	}
	return Image{
		Tags: []string{"kind-e2e/testdriver:abc", "registry.k8s.io/pause:3.10"},
		Files: []File{
			{Path: "/usr/local/bin/tool", Mode: 0o755, Source: bin},
			{Path: "/etc/x/y.conf", Data: []byte("k=v")},
			{Path: "/usr/sbin/iptables", Symlink: "xtables-nft-multi"},
			{Path: "/pause", Mode: 0o700, Data: []byte("p")},
		},
		Entrypoint: []string{"/pause"},
	}
}

// oldDiffID and oldListing are what the hand-written writer this package had
// before go-containerregistry produced for sample: its layer is kept byte for
// byte.
const oldDiffID = "sha256:8f252d0fc4e63ada0b75bbaa0504d00ee0d28a17ed549d99b63c2f23933f8799"

var oldListing = []string{
	"etc/ dir 755 0:0 0",
	"etc/x/ dir 755 0:0 0",
	"etc/x/y.conf file 644 0:0 0 size=3",
	"pause file 700 0:0 0 size=1",
	"usr/ dir 755 0:0 0",
	"usr/local/ dir 755 0:0 0",
	"usr/local/bin/ dir 755 0:0 0",
	"usr/local/bin/tool file 755 0:0 0 size=8",
	"usr/sbin/ dir 755 0:0 0",
	"usr/sbin/iptables symlink 777 0:0 0 -> xtables-nft-multi",
}

// listing is one line per entry of a tar: name, type, mode, owner, mtime.
func listing(t *testing.T, r io.Reader) []string {
	t.Helper()
	var out []string
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		kind := map[byte]string{tar.TypeDir: "dir", tar.TypeReg: "file", tar.TypeSymlink: "symlink"}[h.Typeflag]
		line := fmt.Sprintf("%s %s %o %d:%d %d", h.Name, kind, h.Mode, h.Uid, h.Gid, h.ModTime.Unix())
		switch h.Typeflag {
		case tar.TypeReg:
			line += fmt.Sprintf(" size=%d", h.Size)
		case tar.TypeSymlink:
			line += " -> " + h.Linkname
		}
		out = append(out, line)
	}
}

func write(t *testing.T, img Image) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "image.tar")
	if err := img.WriteFile(file); err != nil {
		t.Fatal(err)
	}
	return file
}

func TestArchiveReadsBackUnderEveryTag(t *testing.T) {
	img := sample(t)
	file := write(t, img)
	id, err := img.ID()
	if err != nil {
		t.Fatal(err)
	}
	for _, tag := range img.Tags {
		ref, err := name.NewTag(tag)
		if err != nil {
			t.Fatal(err)
		}
		got, err := tarball.ImageFromPath(file, &ref)
		if err != nil {
			t.Fatalf("%s: %v", tag, err)
		}
		if cn, _ := got.ConfigName(); cn.String() != id {
			t.Errorf("%s: image ID %s, want %s", tag, cn, id)
		}
		cfg, err := got.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cfg.OS != "linux" || cfg.Architecture != "amd64" || !cfg.Created.Equal(epoch) {
			t.Errorf("%s: os %q arch %q created %v", tag, cfg.OS, cfg.Architecture, cfg.Created)
		}
		if !reflect.DeepEqual(cfg.Config.Entrypoint, []string{"/pause"}) || !reflect.DeepEqual(cfg.Config.Env, defaultEnv) {
			t.Errorf("%s: config %+v", tag, cfg.Config)
		}
		layers, err := got.Layers()
		if err != nil || len(layers) != 1 {
			t.Fatalf("%s: layers %v %v", tag, layers, err)
		}
		if d, _ := layers[0].DiffID(); d.String() != oldDiffID {
			t.Errorf("%s: layer %s, the old writer's was %s", tag, d, oldDiffID)
		}
		rc, err := layers[0].Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		if l := listing(t, rc); !reflect.DeepEqual(l, oldListing) {
			t.Errorf("%s: layer\n%s\nwant\n%s", tag, strings.Join(l, "\n"), strings.Join(oldListing, "\n"))
		}
		rc.Close()
	}
}

// TestArchiveLayoutIsDockerSave checks what `docker load` and `ctr images
// import` read: manifest.json with the tags as given (containerd makes
// docker.io/kind-e2e/testdriver:abc of them), the config, and the layer as
// an uncompressed tar named by its digest.
func TestArchiveLayoutIsDockerSave(t *testing.T) {
	img := sample(t)
	f, err := os.Open(write(t, img))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	contents := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		contents[h.Name], _ = io.ReadAll(tr)
	}
	var manifest []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	if err := json.Unmarshal(contents["manifest.json"], &manifest); err != nil {
		t.Fatal(err)
	}
	if len(manifest) != 1 || len(contents) != 3 {
		t.Fatalf("manifest %+v, entries %d", manifest, len(contents))
	}
	m := manifest[0]
	tags := append([]string(nil), m.RepoTags...)
	sort.Strings(tags)
	if !reflect.DeepEqual(tags, img.Tags) {
		t.Errorf("RepoTags %v, want %v as given", m.RepoTags, img.Tags)
	}
	id, _ := img.ID()
	if m.Config != id || contents[m.Config] == nil {
		t.Errorf("config %q, want %q", m.Config, id)
	}
	want := strings.TrimPrefix(oldDiffID, "sha256:") + ".tar"
	if !reflect.DeepEqual(m.Layers, []string{want}) {
		t.Fatalf("layers %v, want [%s]", m.Layers, want)
	}
	layer := contents[want]
	if sum := sha256.Sum256(layer); "sha256:"+hex.EncodeToString(sum[:]) != oldDiffID {
		t.Error("the layer is stored compressed or altered; want the uncompressed tar")
	}
	if l := listing(t, bytes.NewReader(layer)); !reflect.DeepEqual(l, oldListing) {
		t.Errorf("layer %v", l)
	}
	var cfg struct {
		RootFS struct {
			DiffIDs []string `json:"diff_ids"`
		} `json:"rootfs"`
	}
	json.Unmarshal(contents[m.Config], &cfg)
	if !reflect.DeepEqual(cfg.RootFS.DiffIDs, []string{oldDiffID}) {
		t.Errorf("diff_ids %v", cfg.RootFS.DiffIDs)
	}
}

func TestSameInputsSameImageID(t *testing.T) {
	a := Image{Tags: []string{"x:1"}, Files: []File{{Path: "/b", Data: []byte("2")}, {Path: "/a", Data: []byte("1")}}}
	b := Image{Tags: []string{"x:1"}, Files: []File{{Path: "/a", Data: []byte("1")}, {Path: "/b", Data: []byte("2")}}}
	ida, _ := a.ID()
	idb, _ := b.ID()
	if ida != idb {
		t.Fatalf("file order changed the image: %s vs %s", ida, idb)
	}
	b.Files[0].Data = []byte("changed")
	if idc, _ := b.ID(); idc == ida {
		t.Fatal("a changed file must change the image ID")
	}
}

// An image names the platform its binaries were compiled for: the config
// carries it, and it is part of the image's identity (an arm64 build of the
// same files is another image). Unnamed, it stays linux/amd64, which the
// test above reads back.
func TestArchiveNamesItsPlatform(t *testing.T) {
	img := Image{Tags: []string{"x:1"}, Files: []File{{Path: "/a", Data: []byte("1")}}}
	amd64, _ := img.ID()
	img.OS, img.Architecture = "linux", "arm64"
	arm64, _ := img.ID()
	if arm64 == amd64 {
		t.Errorf("linux/arm64 and linux/amd64 give one image ID %s", arm64)
	}
	ref, _ := name.NewTag("x:1")
	got, err := tarball.ImageFromPath(write(t, img), &ref)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := got.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.OS != "linux" || cfg.Architecture != "arm64" {
		t.Errorf("config os %q architecture %q, want linux arm64", cfg.OS, cfg.Architecture)
	}
}

func TestRelativePathIsRefused(t *testing.T) {
	if _, err := (Image{Tags: []string{"x:1"}, Files: []File{{Path: "rel"}}}).Layer(); err == nil {
		t.Fatal("want error for relative path")
	}
}

func TestBadTagWritesNothing(t *testing.T) {
	file := filepath.Join(t.TempDir(), "image.tar")
	for _, tags := range [][]string{nil, {"Not A Tag"}} {
		if err := (Image{Tags: tags, Files: []File{{Path: "/a", Data: []byte("1")}}}).WriteFile(file); err == nil {
			t.Errorf("tags %q: want error", tags)
		}
	}
	if left, _ := filepath.Glob(file + "*"); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// One archive of several images, as a release's control-plane images are
// built for a switch: each reads back under its own tag with its own files,
// and a tag given to two images is refused before anything is written.
func TestArchiveOfSeveralImages(t *testing.T) {
	file := filepath.Join(t.TempDir(), "control-plane.tar")
	a := Image{Tags: []string{"registry.k8s.io/kube-apiserver:v1.36.3"}, Files: []File{{Path: "/usr/local/bin/kube-apiserver", Mode: 0o755, Data: []byte("a")}}}
	b := Image{Tags: []string{"registry.k8s.io/kube-scheduler:v1.36.3"}, Files: []File{{Path: "/usr/local/bin/kube-scheduler", Mode: 0o755, Data: []byte("bb")}}}
	if err := WriteArchive(file, a, b); err != nil {
		t.Fatal(err)
	}
	for _, img := range []Image{a, b} {
		ref, _ := name.NewTag(img.Tags[0])
		got, err := tarball.ImageFromPath(file, &ref)
		if err != nil {
			t.Fatalf("%s: %v", ref, err)
		}
		layers, err := got.Layers()
		if err != nil || len(layers) != 1 {
			t.Fatalf("%s: layers %v %v", ref, layers, err)
		}
		rc, err := layers[0].Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		want := strings.TrimPrefix(img.Files[0].Path, "/") + fmt.Sprintf(" file 755 0:0 0 size=%d", len(img.Files[0].Data))
		if l := listing(t, rc); l[len(l)-1] != want {
			t.Errorf("%s: layer %q, want it to end in %q", ref, l, want)
		}
		rc.Close()
	}
	twice := filepath.Join(t.TempDir(), "twice.tar")
	if err := WriteArchive(twice, a, Image{Tags: a.Tags, Files: b.Files}); err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Errorf("a tag of two images: %v", err)
	}
	if left, _ := filepath.Glob(twice + "*"); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}
