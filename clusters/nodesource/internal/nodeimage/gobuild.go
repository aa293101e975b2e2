// SPDX-License-Identifier: Apache-2.0

package nodeimage

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/kep5018/adminaccess-conformance/clusters/gobuild"
	"github.com/kep5018/adminaccess-conformance/clusters/release"
)

// goModule is a throwaway main module, generated under the output folder, that
// pins one upstream module and builds commands from it. Kubernetes, containerd,
// etcd and CoreDNS are all built this way, straight from the Go module proxy.
type goModule struct {
	Name     string            // folder name under src/
	Require  map[string]string // module -> version
	Replace  map[string]string // module -> "module version"
	MainGo   string            // optional main.go contents (for our own small mains)
	Packages []string          // packages to build ("." for MainGo)
	LDFlags  string
	Tags     string
	Output   string // for a single package: file; for several: folder
	// Toolchain is the Go toolchain the module needs (release.Toolchain);
	// "" is the project's own Go.
	Toolchain string
}

// toolchainEnv is GOTOOLCHAIN for a go command of a module that needs
// toolchain: that toolchain, which the go command takes from the module
// proxy (golang.org/toolchain) the first time, or else the Go that runs
// here and nothing newer, so that a module never moves the build to
// another Go unasked.
func toolchainEnv(toolchain string) string {
	if toolchain == "" {
		return "GOTOOLCHAIN=local"
	}
	return "GOTOOLCHAIN=" + toolchain
}

func (m goModule) goMod() string {
	var b strings.Builder
	fmt.Fprintf(&b, "module nodeimage.local/%s\n\ngo 1.25.0\n\n", m.Name)
	for _, mod := range sortedKeys(m.Require) {
		fmt.Fprintf(&b, "require %s %s\n", mod, m.Require[mod])
	}
	if len(m.Replace) > 0 {
		b.WriteString("\nreplace (\n")
		for _, mod := range sortedKeys(m.Replace) {
			fmt.Fprintf(&b, "\t%s => %s\n", mod, m.Replace[mod])
		}
		b.WriteString(")\n")
	}
	return b.String()
}

// writeModule writes m's folder under the output folder: go.mod, rewritten
// only when its requirements change (`go build -mod=mod` adds the resolved
// requirements and go.sum, which later builds reuse), and main.go.
func (b *Builder) writeModule(m goModule) (string, error) {
	dir := filepath.Join(b.Out, "src", m.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	want := m.goMod()
	stamp := filepath.Join(dir, "go.mod.want")
	if old, err := os.ReadFile(stamp); err != nil || string(old) != want {
		os.Remove(filepath.Join(dir, "go.sum"))
		if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(want), 0o644); err != nil {
			return "", err
		}
		if err := os.WriteFile(stamp, []byte(want), 0o644); err != nil {
			return "", err
		}
	}
	if m.MainGo != "" {
		if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(m.MainGo), 0o644); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// goBuild writes the module and runs `go build` with the project's flags
// (gobuild.Flags). -trimpath keeps the Go build cache valid across
// checkouts, so a fresh clone rebuilds in seconds. -dwarf=false: the
// linker strips the debug information anyway (-s -w), so the compiler need
// not write it; measured cold on 2 cores, the four commands of a release
// switch compile in 205-214 s instead of 229-230 s, into the same code.
func (b *Builder) goBuild(ctx context.Context, m goModule) error {
	dir, err := b.writeModule(m)
	if err != nil {
		return err
	}
	out := m.Output
	if len(m.Packages) > 1 { // a folder of commands
		if err := os.MkdirAll(out, 0o755); err != nil {
			return err
		}
		out += string(os.PathSeparator)
	}
	args := goBuildArgs(out)
	if m.LDFlags != "" {
		args = append(args, "-ldflags", m.LDFlags)
	}
	if m.Tags != "" {
		args = append(args, "-tags", m.Tags)
	}
	return b.goCommand(ctx, dir, m.Toolchain, append(args, m.Packages...))
}

// goBuildArgs is go build's arguments in a generated module, writing out:
// the project's flags on the command line, since the module's GOFLAGS must
// be -mod=mod alone (goCommand).
func goBuildArgs(out string) []string {
	return append(append([]string{"build"}, gobuild.Flags...), "-o", out)
}

// download resolves m's imports as its build will and downloads the modules
// they come from (`go list -deps`), compiling nothing, so that the build
// only compiles.
func (b *Builder) download(ctx context.Context, m goModule) error {
	dir, err := b.writeModule(m)
	if err != nil {
		return err
	}
	args := []string{"list", "-deps", "-f", "{{if .Error}}{{.Error}}{{end}}"}
	if m.Tags != "" {
		args = append(args, "-tags", m.Tags)
	}
	return b.goCommand(ctx, dir, m.Toolchain, append(args, m.Packages...))
}

// goCommand runs go with args in a generated module's folder dir, under
// the toolchain the module needs.
func (b *Builder) goCommand(ctx context.Context, dir, toolchain string, args []string) error {
	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", gobuild.CgoOff, toolchainEnv(toolchain))
	if b.Yield {
		// The compiler and linker go starts inherit the policy. SCHED_IDLE
		// rather than nice 19 (where chrt is): a kernel hands a task of
		// the suite that wakes a CPU running only idle-policy work, and it
		// preempts that work at once, so the cluster under test answers as
		// if the build were not there.
		if _, err := exec.LookPath("chrt"); err == nil {
			return b.run(ctx, dir, env, "chrt", append([]string{"--idle", "0", "go"}, args...)...)
		}
		return b.run(ctx, dir, env, "nice", append([]string{"-n", "19", "go"}, args...)...)
	}
	return b.run(ctx, dir, env, "go", args...)
}

// kubernetesModule builds Kubernetes commands of release r (all a node image
// needs: kubernetesCommands), with every staging module pinned to its v0.N.P
// twin (the `=> ./staging/...` lines of k8s.io/kubernetes' own go.mod) and
// the version stamps Kubernetes' own build sets.
func kubernetesModule(r release.Release, moduleDir, out string, commands []string) (goModule, error) {
	version := r.Version
	staging, err := stagingModules(filepath.Join(moduleDir, "go.mod"))
	if err != nil {
		return goModule{}, err
	}
	twin := "v0" + strings.TrimPrefix(version, "1") // 1.35.4 -> v0.35.4
	replace := map[string]string{}
	for _, mod := range staging {
		replace[mod] = mod + " " + twin
	}
	parts := strings.SplitN(version, ".", 3)
	var ld []string
	for _, pkg := range []string{"k8s.io/component-base/version", "k8s.io/client-go/pkg/version"} {
		ld = append(ld,
			"-X", pkg+".gitVersion=v"+version, "-X", pkg+".gitMajor="+parts[0], "-X", pkg+".gitMinor="+parts[1],
			// The module proxy carries no commit; say so rather than invent one.
			"-X", pkg+".gitCommit=0000000000000000000000000000000000000000", "-X", pkg+".gitTreeState=clean",
			"-X", pkg+".buildDate=1970-01-01T00:00:00Z")
	}
	var pkgs []string
	for _, c := range commands {
		pkgs = append(pkgs, "k8s.io/kubernetes/cmd/"+c)
	}
	return goModule{
		Name:      "kubernetes-v" + version,
		Require:   map[string]string{"k8s.io/kubernetes": "v" + version},
		Replace:   replace,
		Packages:  pkgs,
		LDFlags:   "-s -w " + strings.Join(ld, " "),
		Output:    out,
		Toolchain: r.Toolchain,
	}, nil
}

var kubernetesCommands = []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy", "kubelet", "kubeadm", "kubectl"}

// switchCommands are what a release switch installs (the kubelet and the
// control plane's images, profile.ControlPlane); kube-proxy, kubeadm and
// kubectl stay the node image's.
var switchCommands = []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet"}

// stagingModules lists the modules k8s.io/kubernetes replaces with its staging folders.
func stagingModules(goModPath string) ([]string, error) {
	f, err := os.Open(goModPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) == 3 && fields[1] == "=>" && strings.HasPrefix(fields[2], "./staging/") {
			out = append(out, fields[0])
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no staging replaces found", goModPath)
	}
	return out, s.Err()
}

func containerdModule(out string) goModule {
	v := "github.com/containerd/containerd/v2/version"
	return goModule{
		Name:    "containerd-" + ContainerdVersion,
		Require: map[string]string{"github.com/containerd/containerd/v2": ContainerdVersion},
		Packages: []string{"github.com/containerd/containerd/v2/cmd/containerd",
			"github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2", "github.com/containerd/containerd/v2/cmd/ctr"},
		Tags:    "no_aufs no_zfs no_btrfs no_devmapper",
		LDFlags: fmt.Sprintf("-s -w -X %s.Version=%s -X %s.Package=github.com/containerd/containerd/v2", v, ContainerdVersion, v),
		Output:  out,
	}
}

func etcdModule(version, out string) goModule {
	return goModule{
		Name:     "etcd-" + version,
		Require:  map[string]string{"go.etcd.io/etcd/server/v3": version},
		MainGo:   mustAsset("assets/etcd.main.go.txt"),
		Packages: []string{"."},
		LDFlags:  "-s -w",
		Output:   out,
	}
}

func corednsModule(version, out string) goModule {
	return goModule{
		Name:     "coredns-" + version,
		Require:  map[string]string{"github.com/coredns/coredns": version},
		MainGo:   mustAsset("assets/coredns.main.go.txt"),
		Packages: []string{"."},
		LDFlags:  "-s -w",
		Output:   out,
	}
}

func mustAsset(name string) string {
	b, err := assets.ReadFile(name)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// since formats a duration for progress lines.
func since(t time.Time) string { return time.Since(t).Round(100 * time.Millisecond).String() }
