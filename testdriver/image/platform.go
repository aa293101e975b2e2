// SPDX-License-Identifier: Apache-2.0

package image

import (
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"slices"
	"strings"
)

// Platform is where an image's binaries run: an operating system and an
// architecture, in Go's names (GOOS, GOARCH). A node's status
// (nodeInfo.operatingSystem, .architecture: the kubelet's runtime.GOOS and
// GOARCH) and an image's config use the same names, so a platform read
// from the nodes is what the compile is given and what the config says.
type Platform struct{ OS, Arch string }

func (p Platform) String() string { return p.OS + "/" + p.Arch }

// dir is the platform as one path element: linux-arm64.
func (p Platform) dir() string { return p.OS + "-" + p.Arch }

// ParsePlatform reads "linux/arm64".
func ParsePlatform(s string) (Platform, error) {
	system, arch, ok := strings.Cut(s, "/")
	if !ok || system == "" || arch == "" || strings.Contains(arch, "/") {
		return Platform{}, fmt.Errorf("platform %q is not os/architecture, such as linux/arm64", s)
	}
	return Platform{system, arch}, nil
}

// HostPlatform is Linux on this machine's architecture: the platform of a
// kind cluster's nodes, which are containers on this machine's CPU (under
// Docker Desktop's Linux VM on a Mac), and the images' default.
func HostPlatform() Platform { return Platform{"linux", runtime.GOARCH} }

// CheckPlatform says in a few words why the images cannot be built for a
// platform, the caller naming it: an OS other than Linux (they have no base image and hold
// Linux binaries: a Windows node runs neither), 32-bit ARM (a node's
// status does not say which ARM version, v5, v6 or v7, its binaries need,
// and GOARM must be chosen at compile time), and what the go command does
// not compile for (go tool dist list: this Go's own list).
func CheckPlatform(ctx context.Context, p Platform) error {
	switch {
	case p.OS != "linux":
		return fmt.Errorf("the images hold Linux binaries and no base image, which a %s node cannot run", p.OS)
	case p.Arch == "arm":
		return errors.New("a node's status does not say which 32-bit ARM version (v5, v6, v7) it runs, and the binaries must be compiled for one")
	}
	known, err := goPlatforms(ctx)
	if err != nil {
		return err
	}
	if !slices.Contains(known, p.String()) {
		return fmt.Errorf("Go cannot compile for it (go tool dist list names no %s)", p)
	}
	return nil
}

// goPlatforms are the platforms this machine's go command compiles for.
func goPlatforms(ctx context.Context) ([]string, error) {
	out, err := exec.CommandContext(ctx, "go", "tool", "dist", "list").Output()
	if err != nil {
		return nil, fmt.Errorf("go tool dist list: %w", err)
	}
	return strings.Fields(string(out)), nil
}

// machines is the ELF machine of each Linux GOARCH the check below knows:
// what a binary compiled for that architecture says in its header.
var machines = map[string]elf.Machine{
	"amd64": elf.EM_X86_64, "386": elf.EM_386, "arm64": elf.EM_AARCH64, "arm": elf.EM_ARM,
	"ppc64": elf.EM_PPC64, "ppc64le": elf.EM_PPC64, "s390x": elf.EM_S390, "riscv64": elf.EM_RISCV,
	"loong64": elf.EM_LOONGARCH, "mips": elf.EM_MIPS, "mipsle": elf.EM_MIPS, "mips64": elf.EM_MIPS, "mips64le": elf.EM_MIPS,
}

// Machine is the ELF machine of a binary compiled for p, and whether the
// table above knows p's architecture.
func (p Platform) Machine() (elf.Machine, bool) {
	m, ok := machines[p.Arch]
	return m, ok && p.OS == "linux"
}
