// SPDX-License-Identifier: Apache-2.0

package nodeimage

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// stage lays out every file the node image adds to the root filesystem, so one
// `docker cp` puts them in place.
func (b *Builder) stage(rec Recipe, bins binaries, imagesDir, dir string) error {
	os.RemoveAll(dir)
	kindDir, err := b.moduleDir("sigs.k8s.io/kind")
	if err != nil {
		return err
	}
	// kind's own base-image files: entrypoint, systemd units, kubelet drop-ins.
	base := filepath.Join(kindDir, "images/base/files")
	if err := copyTree(base, dir); err != nil {
		return err
	}
	kindConfig, err := os.ReadFile(filepath.Join(base, "etc/containerd/config.toml"))
	if err != nil {
		return err
	}
	cfg, err := ContainerdConfig(string(kindConfig))
	if err != nil {
		return err
	}
	files := map[string]string{ // destination -> source
		"usr/local/bin/containerd":              filepath.Join(bins.containerd, "containerd"),
		"usr/local/bin/containerd-shim-runc-v2": filepath.Join(bins.containerd, "containerd-shim-runc-v2"),
		"usr/local/bin/ctr":                     filepath.Join(bins.containerd, "ctr"),
		strings.TrimPrefix(ShimPath, "/"):       bins.capshim,
	}
	for _, c := range []string{"kubelet", "kubeadm", "kubectl"} {
		// kind's kubelet unit expects /usr/bin/kubelet.
		files["usr/bin/"+c] = filepath.Join(bins.kubernetes, c)
	}
	for dst, src := range files {
		if err := copyFile(src, filepath.Join(dir, dst), 0o755); err != nil {
			return err
		}
	}
	writes := map[string]string{
		"etc/containerd/config.toml":          cfg,
		"kind/version":                        rec.Release.GitVersion(),
		"kind/manifests/default-storage.yaml": mustAsset("assets/default-storage.yaml"),
		"kind/build.sh":                       mustAsset("assets/build.sh"),
	}
	// What the image's Kubernetes was built against in place of modules
	// the proxy did not serve, for anyone who reads the node.
	if len(rec.StandIns) > 0 {
		var lines []string
		for _, s := range rec.StandIns {
			lines = append(lines, s.String())
		}
		writes["kind/stand-ins"] = strings.Join(lines, "\n") + "\n"
	}
	for dst, data := range writes {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, dst)), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, dst), []byte(data), 0o644); err != nil {
			return err
		}
	}
	for _, p := range []string{"usr/local/bin/entrypoint", "usr/local/bin/clean-install", "kind/bin"} {
		filepath.Walk(filepath.Join(dir, p), func(path string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() {
				os.Chmod(path, 0o755)
			}
			return nil
		})
	}
	return copyTree(imagesDir, filepath.Join(dir, "kind/images"))
}

// assemble turns the rootfs tarball plus the staged files into the node image:
// import, copy, run the in-container steps (systemd set-up, image preload into
// containerd), commit. The build container is removed whatever happens.
func (b *Builder) assemble(ctx context.Context, rec Recipe, rootfsTar, stageDir, tag string) error {
	base, err := b.importRootfs(ctx, rootfsTar)
	if err != nil {
		return err
	}
	name := fmt.Sprintf("kind-e2e-build-%s-%d", strings.ReplaceAll(rec.Release.Version, ".", "-"), os.Getpid())
	// Privileged: containerd runs inside to preload the images.
	if err := b.run(ctx, "", nil, "docker", "run", "-d", "--privileged", "--name", name, "--entrypoint", "sleep", base, "infinity"); err != nil {
		return err
	}
	defer exec.Command("docker", "rm", "-f", name).Run()
	if err := b.run(ctx, "", nil, "docker", "cp", stageDir+"/.", name+":/"); err != nil {
		return err
	}
	if err := b.run(ctx, "", nil, "docker", "exec", name, "bash", "/kind/build.sh", rec.Release.GitVersion()); err != nil {
		return err
	}
	// docker commit cannot set STOPSIGNAL; a metadata-only build on top can,
	// and systemd as PID 1 shuts down cleanly only on SIGRTMIN+3.
	tmpTag := tag + "-commit"
	if err := b.run(ctx, "", nil, "docker", "commit",
		"--change", `ENTRYPOINT [ "/usr/local/bin/entrypoint", "/sbin/init" ]`,
		"--change", "ENV container=docker",
		name, tmpTag); err != nil {
		return err
	}
	defer exec.Command("docker", "rmi", tmpTag).Run()
	dockerfile := fmt.Sprintf("FROM %s\nSTOPSIGNAL SIGRTMIN+3\n", tmpTag)
	cmd := exec.CommandContext(ctx, "docker", "build", "-q", "-t", tag, "-")
	cmd.Stdin = strings.NewReader(dockerfile)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("docker build (STOPSIGNAL): %v: %s", err, out)
	}
	return nil
}

// importRootfs makes the root filesystem's tarball the base image the
// node image starts from, unless it exists, and names it.
func (b *Builder) importRootfs(ctx context.Context, rootfsTar string) (string, error) {
	base := "kind-e2e/rootfs:" + rootfsKey()
	if exec.CommandContext(ctx, "docker", "image", "inspect", base).Run() != nil {
		if err := b.run(ctx, "", nil, "docker", "import", rootfsTar, base); err != nil {
			return "", err
		}
	}
	return base, nil
}

func copyFile(src, dst string, mode os.FileMode) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, data, mode)
}

// copyTree copies regular files and folders (the module cache's files are
// read-only; copies get ordinary modes so later steps can change them).
func copyTree(src, dst string) error {
	return filepath.Walk(src, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		mode := os.FileMode(0o644)
		if info.Mode()&0o111 != 0 {
			mode = 0o755
		}
		return copyFile(path, target, mode)
	})
}
