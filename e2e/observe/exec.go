// SPDX-License-Identifier: Apache-2.0

package observe

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
)

// Exec runs a shell command in a container of a running pod, as kubectl
// exec does, and returns what it printed. A command that exits non-zero is
// an error that carries its output: with a driver of the user's own, such a
// command (ADMIN_CHECK, say nvidia-smi) is what shows the device works.
func Exec(ctx context.Context, cfg *rest.Config, client kubernetes.Interface, namespace, pod, container, command string) (string, error) {
	var out bytes.Buffer
	if err := ExecCommand(ctx, cfg, client, namespace, pod, container, []string{"sh", "-c", command}, &out, &out); err != nil {
		return out.String(), fmt.Errorf("%q in container %s of pod %s: %w; it printed: %s", command, container, pod, err, strings.TrimSpace(out.String()))
	}
	return out.String(), nil
}

// ExecCommand runs command (no shell) in a container of a running pod
// through the API, its output streamed to stdout and stderr as it comes:
// what Exec runs a shell through, and how make incluster-e2e copies results
// out of a container that has no tar.
func ExecCommand(ctx context.Context, cfg *rest.Config, client kubernetes.Interface, namespace, pod, container string, command []string, stdout, stderr io.Writer) error {
	req := client.CoreV1().RESTClient().Post().Resource("pods").Namespace(namespace).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: container, Command: command, Stdout: true, Stderr: true}, scheme.ParameterCodec)
	ex, err := remotecommand.NewSPDYExecutor(cfg, "POST", req.URL())
	if err != nil {
		return err
	}
	return ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: stdout, Stderr: stderr})
}
