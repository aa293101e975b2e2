package imagearchive

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func readTar(t *testing.T, b []byte) map[string]*tar.Header {
	t.Helper()
	out := map[string]*tar.Header{}
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out[h.Name] = h
	}
}

func TestArchiveHasManifestConfigAndLayer(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "tool")
	os.WriteFile(bin, []byte("#!binary"), 0o755)
	img := Image{
		Tags:       []string{"registry.k8s.io/pause:3.10"},
		Files:      []File{{Path: "/pause", Mode: 0o755, Source: bin}, {Path: "/etc/x/y.conf", Data: []byte("k=v")}, {Path: "/bin/p", Symlink: "/pause"}},
		Entrypoint: []string{"/pause"},
	}
	var buf bytes.Buffer
	if err := img.Write(&buf); err != nil {
		t.Fatal(err)
	}
	var manifest []manifestEntry
	var config imageConfig
	var layer []byte
	tr := tar.NewReader(&buf)
	contents := map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		b, _ := io.ReadAll(tr)
		contents[h.Name] = b
	}
	if err := json.Unmarshal(contents["manifest.json"], &manifest); err != nil {
		t.Fatal(err)
	}
	if len(manifest) != 1 || !reflect.DeepEqual(manifest[0].RepoTags, img.Tags) {
		t.Fatalf("manifest %+v", manifest)
	}
	json.Unmarshal(contents[manifest[0].Config], &config)
	layer = contents[manifest[0].Layers[0]]
	if config.RootFS.DiffIDs[0] != "sha256:"+digest(layer) {
		t.Fatal("diff_id does not match the layer")
	}
	if !reflect.DeepEqual(config.Config.Entrypoint, []string{"/pause"}) || config.Config.Env == nil {
		t.Fatalf("config %+v", config.Config)
	}
	entries := readTar(t, layer)
	for _, name := range []string{"etc/", "etc/x/", "etc/x/y.conf", "pause", "bin/", "bin/p"} {
		if entries[name] == nil {
			t.Errorf("layer lacks %s (has %v)", name, entries)
		}
	}
	if entries["pause"].Mode != 0o755 || entries["bin/p"].Linkname != "/pause" {
		t.Errorf("mode/link wrong: %+v %+v", entries["pause"], entries["bin/p"])
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

func TestRelativePathIsRefused(t *testing.T) {
	if _, err := (Image{Tags: []string{"x:1"}, Files: []File{{Path: "rel"}}}).Layer(); err == nil {
		t.Fatal("want error for relative path")
	}
}
