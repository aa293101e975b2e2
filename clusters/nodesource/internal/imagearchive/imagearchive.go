// SPDX-License-Identifier: Apache-2.0

// Package imagearchive writes single-layer container images as `docker save`
// archives from files on disk, with no base image and no registry. Both
// `docker load` and `ctr images import` read the result. The node images'
// control-plane images and the test driver's image are made this way, because
// nothing can be pulled on the machines the suite must run on.
//
// The layer tar is ours (Layer: which paths, modes, symlinks and parent
// directories); the image around it (config, manifest.json, the archive's
// layout) is go-containerregistry's: empty.Image, mutate and tarball.
//
// The layer and config are deterministic (sorted entries, zero times), so the
// same inputs give the same image ID and a rebuild changes nothing. The layer
// is stored uncompressed, as `docker save` stores it.
package imagearchive

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
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
	// OS and Architecture are the config's platform, which must be the
	// one its binaries were compiled for: a runtime takes the config's word
	// and execs them. Empty is linux/amd64, the platform of the node images
	// and of what they run (see image).
	OS, Architecture string
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
// gzipped into the archive. The platform is linux/amd64 unless the Image
// names another: the node images' own images are amd64 (the node build
// reads x86_64 libraries, release bits are exported for linux/amd64),
// while Go binaries may be compiled for any platform and say so.
func (img Image) image() (v1.Image, error) {
	layer, err := img.Layer()
	if err != nil {
		return nil, err
	}
	env := img.Env
	if len(env) == 0 {
		env = defaultEnv
	}
	system, arch := img.OS, img.Architecture
	if system == "" {
		system = "linux"
	}
	if arch == "" {
		arch = "amd64"
	}
	cfg := &v1.ConfigFile{
		Architecture: arch, OS: system, Created: v1.Time{Time: epoch},
		Config: v1.Config{Env: env, Entrypoint: img.Entrypoint, Cmd: img.Cmd, WorkingDir: img.WorkingDir},
		RootFS: v1.RootFS{Type: "layers"},
	}
	base, err := mutate.ConfigFile(empty.Image, cfg)
	if err != nil {
		return nil, err
	}
	// Append fills in rootfs.diff_ids and adds the layer's history entry.
	return mutate.Append(base, mutate.Addendum{
		Layer:   static.NewLayer(layer, types.DockerUncompressedLayer),
		History: v1.History{Created: v1.Time{Time: epoch}},
	})
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
// docker.io/kind-e2e/testdriver:abc). With several tags their order in
// RepoTags is go-containerregistry's and may differ between writes.
func (img Image) Write(w io.Writer) error { return writeAll(w, img) }

// writeAll writes one archive that holds every image, each under its tags.
func writeAll(w io.Writer, images ...Image) error {
	refs := map[name.Reference]v1.Image{}
	for _, img := range images {
		if len(img.Tags) == 0 {
			return fmt.Errorf("image has no tag")
		}
		i, err := img.image()
		if err != nil {
			return err
		}
		for _, t := range img.Tags {
			tag, err := name.NewTag(t)
			if err != nil {
				return fmt.Errorf("image tag %q: %w", t, err)
			}
			if _, twice := refs[tag]; twice {
				return fmt.Errorf("image tag %q is given twice", t)
			}
			refs[tag] = i
		}
	}
	return tarball.MultiRefWrite(refs, w)
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
