// SPDX-License-Identifier: Apache-2.0

package nodeimage

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/kep5018/adminaccess-conformance/clusters/profile"
	"github.com/kep5018/adminaccess-conformance/clusters/release"
)

// recipeRevision is bumped whenever the way an image is put together changes in
// a way the hashed inputs below do not capture (the Go code of this package).
//
// 2: the control-plane images' archives are written by go-containerregistry
// (same layer, new config and so new image IDs).
const recipeRevision = "2"

// ContainerdVersion is the containerd built into every node image: the one
// kind v0.33 ships, 2.x so that CDI is on by default.
const ContainerdVersion = "v2.3.4"

// debianSuite and debianPackages make the node's root filesystem. bookworm keeps
// systemd 252, which still supports the cgroup v1 hosts the suite runs on.
const debianSuite = "bookworm"

var debianPackages = []string{
	"systemd", "systemd-sysv", "dbus", "iptables", "nftables", "iproute2", "ethtool", "socat",
	"util-linux", "mount", "kmod", "ca-certificates", "conntrack", "libseccomp2", "pigz",
	"procps", "jq", "e2fsprogs", "containernetworking-plugins", "runc", "bash", "curl",
}

//go:embed assets
var assets embed.FS

// Repository is where offline-built node images are tagged.
const Repository = "kind-e2e/node"

// Recipe is everything that determines one node image.
type Recipe struct {
	Release release.Release
	// Versions kubeadm of that release expects (cmd/kubeadm/app/constants).
	EtcdTag, CoreDNSTag, PauseTag string
	// StandIns are the modules its Kubernetes is built against in place
	// of ones the module proxy does not serve here (standin.go).
	StandIns []StandIn
}

// EtcdVersion is the etcd module version for the etcd image tag ("3.6.6-0" -> "v3.6.6").
func (r Recipe) EtcdVersion() string {
	return "v" + strings.SplitN(r.EtcdTag, "-", 2)[0]
}

// Tag is the content-addressed image name: the same recipe always gives the same tag.
func (r Recipe) Tag() (string, error) {
	h := sha256.New()
	fmt.Fprintln(h, recipeRevision, r.Release.Version, ContainerdVersion, r.EtcdTag, r.CoreDNSTag, r.PauseTag, debianSuite)
	fmt.Fprintln(h, strings.Join(debianPackages, ","))
	if d := standInDigest(r.StandIns); d != "" {
		fmt.Fprintln(h, "stand-ins", d)
	}
	var names []string
	err := fs.WalkDir(assets, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, p)
		}
		return err
	})
	if err != nil {
		return "", err
	}
	sort.Strings(names)
	for _, n := range names {
		b, _ := assets.ReadFile(n)
		fmt.Fprintln(h, n, len(b))
		h.Write(b)
	}
	return fmt.Sprintf("%s:%s-%s", Repository, r.Release.GitVersion(), hex.EncodeToString(h.Sum(nil))[:12]), nil
}

var constantRE = map[string]*regexp.Regexp{
	"etcd":    regexp.MustCompile(`(?m)^\s*DefaultEtcdVersion\s*=\s*"([^"]+)"`),
	"coredns": regexp.MustCompile(`(?m)^\s*CoreDNSVersion\s*=\s*"([^"]+)"`),
	"pause":   regexp.MustCompile(`(?m)^\s*PauseVersion\s*=\s*"([^"]+)"`),
}

// ParseKubeadmConstants reads the image versions from kubeadm's constants.go.
func ParseKubeadmConstants(src string) (etcd, coredns, pause string, err error) {
	get := func(name string) string {
		if m := constantRE[name].FindStringSubmatch(src); m != nil {
			return m[1]
		}
		err = fmt.Errorf("kubeadm constants: no %s version found", name)
		return ""
	}
	etcd, coredns, pause = get("etcd"), get("coredns"), get("pause")
	return
}

// NewRecipe reads kubeadm's pinned image versions from the Kubernetes module
// source of the release (downloaded into the module cache if needed).
func NewRecipe(r release.Release, kubernetesModuleDir string) (Recipe, error) {
	src, err := os.ReadFile(filepath.Join(kubernetesModuleDir, "cmd/kubeadm/app/constants/constants.go"))
	if err != nil {
		return Recipe{}, err
	}
	etcd, coredns, pause, err := ParseKubeadmConstants(string(src))
	if err != nil {
		return Recipe{}, err
	}
	return Recipe{Release: r, EtcdTag: etcd, CoreDNSTag: coredns, PauseTag: pause}, nil
}

// ControlPlaneImages are the image names kubeadm of this release asks for
// (`kubeadm config images list`), keyed by what makes them. The control
// plane's are profile.ControlPlane's, the images a release switch takes out
// of the node image again.
func (r Recipe) ControlPlaneImages() map[string]string {
	v := r.Release.GitVersion()
	images := map[string]string{
		"kube-proxy": "registry.k8s.io/kube-proxy:" + v,
		"etcd":       "registry.k8s.io/etcd:" + r.EtcdTag,
		"coredns":    "registry.k8s.io/coredns/coredns:" + r.CoreDNSTag,
		"pause":      "registry.k8s.io/pause:" + r.PauseTag,
	}
	for _, c := range profile.ControlPlane {
		images[string(c)] = "registry.k8s.io/" + string(c) + ":" + v
	}
	return images
}
