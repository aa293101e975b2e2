// Package imagearchive writes single-layer container images as `docker save`
// archives from files on disk, with no base image and no registry. Both
// `docker load` and `ctr images import` read the result. The node images'
// control-plane images and the test driver's image are made this way, because
// nothing can be pulled on the machines the suite must run on.
//
// Output is deterministic (sorted entries, zero times), so the same inputs give
// the same image ID and a rebuild changes nothing.
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
	"path"
	"sort"
	"strings"
	"time"
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

// Layer returns the uncompressed layer tar of the image's files, with every
// parent directory present.
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
		data := f.Data
		if f.Source != "" {
			var err error
			if data, err = os.ReadFile(f.Source); err != nil {
				return nil, err
			}
		}
		mode := f.Mode
		if mode == 0 {
			mode = 0o644
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Size: int64(len(data)), Mode: mode, ModTime: epoch, Format: tar.FormatPAX}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

type imageConfig struct {
	Architecture string        `json:"architecture"`
	OS           string        `json:"os"`
	Created      time.Time     `json:"created"`
	Config       containerConf `json:"config"`
	RootFS       struct {
		Type    string   `json:"type"`
		DiffIDs []string `json:"diff_ids"`
	} `json:"rootfs"`
}

type containerConf struct {
	Env        []string `json:"Env,omitempty"`
	Entrypoint []string `json:"Entrypoint,omitempty"`
	Cmd        []string `json:"Cmd,omitempty"`
	WorkingDir string   `json:"WorkingDir,omitempty"`
}

type manifestEntry struct {
	Config   string
	RepoTags []string
	Layers   []string
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// ID returns the image ID (the config digest) the archive will load as.
func (img Image) ID() (string, error) {
	_, cfg, err := img.parts()
	if err != nil {
		return "", err
	}
	return "sha256:" + digest(cfg), nil
}

func (img Image) parts() (layer, config []byte, err error) {
	layer, err = img.Layer()
	if err != nil {
		return nil, nil, err
	}
	env := img.Env
	if len(env) == 0 {
		env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	}
	cfg := imageConfig{Architecture: "amd64", OS: "linux", Created: epoch,
		Config: containerConf{Env: env, Entrypoint: img.Entrypoint, Cmd: img.Cmd, WorkingDir: img.WorkingDir}}
	cfg.RootFS.Type = "layers"
	cfg.RootFS.DiffIDs = []string{"sha256:" + digest(layer)}
	config, err = json.Marshal(cfg)
	return layer, config, err
}

// Write writes the archive to w.
func (img Image) Write(w io.Writer) error {
	if len(img.Tags) == 0 {
		return fmt.Errorf("image has no tag")
	}
	layer, config, err := img.parts()
	if err != nil {
		return err
	}
	configName := digest(config) + ".json"
	layerName := digest(layer) + "/layer.tar"
	manifest, err := json.Marshal([]manifestEntry{{Config: configName, RepoTags: img.Tags, Layers: []string{layerName}}})
	if err != nil {
		return err
	}
	tw := tar.NewWriter(w)
	for _, e := range []struct {
		name string
		data []byte
	}{{configName, config}, {layerName, layer}, {"manifest.json", manifest}} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: e.name, Size: int64(len(e.data)), Mode: 0o644, ModTime: epoch}); err != nil {
			return err
		}
		if _, err := tw.Write(e.data); err != nil {
			return err
		}
	}
	return tw.Close()
}

// WriteFile writes the archive to a file, atomically.
func (img Image) WriteFile(name string) error {
	tmp := name + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if err := img.Write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, name)
}
