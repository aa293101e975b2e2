// Package imagearchive writes single-layer container images as `docker save`
// archives from files on disk, with no base image and no registry. Both
// `docker load` and `ctr images import` read the result. The node images'
// control-plane images and the test driver's image are made this way, because
// nothing can be pulled on the machines the suite must run on.
//
// The layer tar is ours (Layer: which paths, modes, symlinks and parent
// directories); the image around it (the config and the digests) is
// go-containerregistry's: empty.Image and mutate. The archive's layout is
// ours again (writeAll): tarball of the v0.20 this module keeps (go.mod
// says why) names an uncompressed layer ".tar.gz".
//
// The layer and config are deterministic (sorted entries, zero times), so the
// same inputs give the same image ID and a rebuild changes nothing. The layer
// is stored uncompressed, as `docker save` stores it.
package imagearchive

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/kep5018/adminaccess-conformance/clusters/registryhost"
)

// File is one entry of the image's only layer.
type File struct {
	Path    string // absolute path inside the image
	Mode    int64  // permission bits
	Source  string // host file to copy; or
	Data    []byte // literal contents; or
	Symlink string // link target
}

// Image describes the image to write.
type Image struct {
	Tags       []string // e.g. registry.k8s.io/kube-apiserver:v1.35.4
	Files      []File
	Entrypoint []string
	Cmd        []string
	Env        []string
	WorkingDir string
}

var epoch = time.Unix(0, 0).UTC()

// defaultEnv is the image's environment when Image.Env is empty.
var defaultEnv = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}

// Layer returns the uncompressed layer tar of the image's files, with every
// parent directory present: entries sorted by path, owned by root, dated at
// the Unix epoch; directories 0755, symlinks 0777, files their Mode (0644
// when none is given).
func (img Image) Layer() ([]byte, error) {
	files := append([]File(nil), img.Files...)
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	var addDirs func(p string) error
	addDirs = func(p string) error {
		if p == "/" || p == "." || dirs[p] {
			return nil
		}
		if err := addDirs(path.Dir(p)); err != nil {
			return err
		}
		dirs[p] = true
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: strings.TrimPrefix(p, "/") + "/", Mode: 0o755, ModTime: epoch, Format: tar.FormatPAX})
	}
	for _, f := range files {
		if !path.IsAbs(f.Path) {
			return nil, fmt.Errorf("image path %q is not absolute", f.Path)
		}
		if err := addDirs(path.Dir(f.Path)); err != nil {
			return nil, err
		}
		name := strings.TrimPrefix(f.Path, "/")
		if f.Symlink != "" {
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: name, Linkname: f.Symlink, Mode: 0o777, ModTime: epoch, Format: tar.FormatPAX}); err != nil {
				return nil, err
			}
			continue
		}
		mode := f.Mode
		if mode == 0 {
			mode = 0o644
		}
		if err := writeFile(tw, name, mode, f); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeFile writes a regular file's header and contents: f.Data, or f.Source
// streamed from disk (a file that changes size meanwhile is an error).
func writeFile(tw *tar.Writer, name string, mode int64, f File) error {
	var src io.Reader = bytes.NewReader(f.Data)
	size := int64(len(f.Data))
	if f.Source != "" {
		in, err := os.Open(f.Source)
		if err != nil {
			return err
		}
		defer in.Close()
		st, err := in.Stat()
		if err != nil {
			return err
		}
		src, size = in, st.Size()
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Size: size, Mode: mode, ModTime: epoch, Format: tar.FormatPAX}); err != nil {
		return err
	}
	if n, err := io.Copy(tw, src); err != nil {
		return fmt.Errorf("%s: %w", f.Source, err)
	} else if n != size {
		return fmt.Errorf("%s: read %d bytes of %d", f.Source, n, size)
	}
	return nil
}

// image is the v1.Image: the empty image with our config, plus the layer.
// The layer is static (kept as it is), not a tarball layer, which would be
// gzipped into the archive. The architecture is amd64 whatever the host's:
// the nodes the suite builds and runs on are amd64 (the node build reads
// x86_64 libraries, release bits are exported for linux/amd64).
func (img Image) image() (v1.Image, error) {
	i, _, err := img.imageAndLayer()
	return i, err
}

// imageAndLayer is image, and the layer tar it holds, which writeAll
// writes as it is.
func (img Image) imageAndLayer() (v1.Image, []byte, error) {
	layer, err := img.Layer()
	if err != nil {
		return nil, nil, err
	}
	env := img.Env
	if len(env) == 0 {
		env = defaultEnv
	}
	cfg := &v1.ConfigFile{
		Architecture: "amd64", OS: "linux", Created: v1.Time{Time: epoch},
		Config: v1.Config{Env: env, Entrypoint: img.Entrypoint, Cmd: img.Cmd, WorkingDir: img.WorkingDir},
		RootFS: v1.RootFS{Type: "layers"},
	}
	base, err := mutate.ConfigFile(empty.Image, cfg)
	if err != nil {
		return nil, nil, err
	}
	// Append fills in rootfs.diff_ids and adds the layer's history entry.
	i, err := mutate.Append(base, mutate.Addendum{
		Layer:   static.NewLayer(layer, types.DockerUncompressedLayer),
		History: v1.History{Created: v1.Time{Time: epoch}},
	})
	return i, layer, err
}

// ID returns the image ID (the config digest) the archive will load as.
func (img Image) ID() (string, error) {
	i, err := img.image()
	if err != nil {
		return "", err
	}
	h, err := i.ConfigName()
	if err != nil {
		return "", err
	}
	return h.String(), nil
}

// Write writes the archive to w, its manifest.json naming the image by every
// tag as given (RepoTags "kind-e2e/testdriver:abc"; containerd lists it as
// docker.io/kind-e2e/testdriver:abc), in the order given.
func (img Image) Write(w io.Writer) error { return writeAll(w, img) }

// writeAll writes one archive that holds every image, each under its tags,
// laid out as `docker save` lays it out: each config as a file named by its
// digest, each layer as an uncompressed tar named by its digest's hex and
// ".tar", and manifest.json, one entry per image with its tags as given,
// sorted by them. An image or layer two images share is written once.
func writeAll(w io.Writer, images ...Image) error {
	type entry struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	var manifest []entry
	files := map[string][]byte{}
	seen := map[string]bool{}
	for _, img := range images {
		if len(img.Tags) == 0 {
			return fmt.Errorf("image has no tag")
		}
		for _, t := range img.Tags {
			if _, err := registryhost.NewTag(t); err != nil {
				return fmt.Errorf("image tag %q: %w", t, err)
			}
			if seen[t] {
				return fmt.Errorf("image tag %q is given twice", t)
			}
			seen[t] = true
		}
		i, layer, err := img.imageAndLayer()
		if err != nil {
			return err
		}
		cfgName, err := i.ConfigName()
		if err != nil {
			return err
		}
		if files[cfgName.String()], err = i.RawConfigFile(); err != nil {
			return err
		}
		cfg, err := i.ConfigFile()
		if err != nil {
			return err
		}
		// The image's one layer, stored uncompressed: named by its diff ID.
		file := cfg.RootFS.DiffIDs[0].Hex + ".tar"
		files[file] = layer
		manifest = append(manifest, entry{Config: cfgName.String(), RepoTags: img.Tags, Layers: []string{file}})
	}
	sort.Slice(manifest, func(i, j int) bool {
		return strings.Join(manifest[i].RepoTags, ",") < strings.Join(manifest[j].RepoTags, ",")
	})
	raw, err := json.Marshal(manifest)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(w)
	put := func(name string, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Size: int64(len(data)), Mode: 0o644, ModTime: epoch, Format: tar.FormatPAX}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := put(n, files[n]); err != nil {
			return err
		}
	}
	if err := put("manifest.json", raw); err != nil {
		return err
	}
	return tw.Close()
}

// WriteFile writes the archive to a file, atomically.
func (img Image) WriteFile(file string) error { return WriteArchive(file, img) }

// WriteArchive writes one archive of several images to a file, atomically:
// a release switch loads a release's control-plane images from one file,
// as it loads those exported from a node image.
func WriteArchive(file string, images ...Image) error {
	tmp := file + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	err = writeAll(f, images...)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, file)
}
