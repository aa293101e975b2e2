// SPDX-License-Identifier: Apache-2.0

package nodeimage

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// rootfsKey names a root filesystem by what went into it.
func rootfsKey() string {
	h := sha256.Sum256([]byte(debianSuite + "\n" + strings.Join(debianPackages, ",")))
	return hex.EncodeToString(h[:])[:12]
}

// DebianMirror returns the Debian mirror this machine's apt already uses, so
// the rootfs comes from the same place as every other package here.
// $DEBIAN_MIRROR overrides it.
func DebianMirror() (string, error) {
	if m := os.Getenv("DEBIAN_MIRROR"); m != "" {
		return m, nil
	}
	files, _ := filepath.Glob("/etc/apt/sources.list.d/*.sources")
	files = append(files, "/etc/apt/sources.list")
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if m := mirrorFromSources(string(raw)); m != "" {
			return m, nil
		}
	}
	return "", fmt.Errorf("no Debian mirror found in /etc/apt; set DEBIAN_MIRROR")
}

// mirrorFromSources picks the first main-archive Debian URI (not the security
// archive) from either apt source format.
func mirrorFromSources(src string) string {
	s := bufio.NewScanner(strings.NewReader(src))
	for s.Scan() {
		line := strings.TrimSpace(s.Text())
		var uri string
		if v, ok := strings.CutPrefix(line, "URIs:"); ok {
			uri = strings.Fields(v)[0]
		} else if fields := strings.Fields(line); len(fields) >= 3 && fields[0] == "deb" {
			uri = fields[1]
			if strings.HasPrefix(uri, "[") { // deb [signed-by=...] URI suite
				if len(fields) < 4 {
					continue
				}
				uri = fields[2]
			}
		}
		if uri != "" && strings.Contains(uri, "debian") && !strings.Contains(uri, "security") {
			return strings.TrimRight(uri, "/")
		}
	}
	return ""
}

// buildRootfs debootstraps the node's root filesystem into a folder (kept: the
// kube-proxy image takes nft and its libraries from it) and tars it for
// `docker import`. Both are reused while the package list is unchanged.
func (b *Builder) buildRootfs(ctx context.Context) (dir, tarball string, err error) {
	key := rootfsKey()
	dir = filepath.Join(b.Out, "rootfs", key)
	tarball = filepath.Join(b.Out, "rootfs", key+".tar")
	if _, err := os.Stat(tarball); err == nil {
		return dir, tarball, nil
	}
	if _, err := exec.LookPath("debootstrap"); err != nil {
		return "", "", fmt.Errorf("building a node image needs debootstrap (apt-get install debootstrap) and root")
	}
	mirror, err := DebianMirror()
	if err != nil {
		return "", "", err
	}
	os.RemoveAll(dir)
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", "", err
	}
	if err := b.run(ctx, "", nil, "debootstrap", "--variant=minbase", "--include="+strings.Join(debianPackages, ","),
		debianSuite, dir, mirror); err != nil {
		return "", "", err
	}
	// The image needs no package lists or caches.
	for _, p := range []string{"var/cache/apt/archives", "var/lib/apt/lists"} {
		entries, _ := os.ReadDir(filepath.Join(dir, p))
		for _, e := range entries {
			if e.Name() != "partial" && e.Name() != "lock" {
				os.RemoveAll(filepath.Join(dir, p, e.Name()))
			}
		}
	}
	if err := b.run(ctx, "", nil, "tar", "--numeric-owner", "-C", dir, "-cf", tarball+".tmp", "."); err != nil {
		return "", "", err
	}
	return dir, tarball, os.Rename(tarball+".tmp", tarball)
}
