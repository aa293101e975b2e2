// SPDX-License-Identifier: Apache-2.0

package metrics

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
	"k8s.io/utils/ptr"
)

// Component is a control-plane component with a secure metrics port.
type Component struct {
	Name string // static pod name prefix, e.g. kube-controller-manager
	Port int
}

var (
	ControllerManager = Component{Name: "kube-controller-manager", Port: 10257}
	Scheduler         = Component{Name: "kube-scheduler", Port: 10259}
)

// Scraper reads metrics with a ServiceAccount's token.
type Scraper struct {
	client kubernetes.Interface
	config *rest.Config
	token  string
}

// NewScraper makes (or reuses) a ServiceAccount in namespace ns bound to the
// built-in system:monitoring ClusterRole, and requests a token for it.
func NewScraper(ctx context.Context, client kubernetes.Interface, config *rest.Config, ns string) (*Scraper, error) {
	const name = "e2e-metrics-reader"
	_, err := client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + name},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "system:monitoring"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: ns}},
	}
	if _, err := client.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	tr, err := client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(3600))}}, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	return &Scraper{client: client, config: config, token: tr.Status.Token}, nil
}

// Cleanup removes the cluster-scoped binding NewScraper made.
func (s *Scraper) Cleanup(ctx context.Context, ns string) {
	s.client.RbacV1().ClusterRoleBindings().Delete(ctx, ns+"-e2e-metrics-reader", metav1.DeleteOptions{})
}

// Scrape reads /metrics of the component's static pod on node. kubeadm binds
// the secure port to the node's loopback, so the request goes through a
// port-forward into the (host-network) pod; authentication stays on.
func (s *Scraper) Scrape(ctx context.Context, c Component, node string) (Families, error) {
	return s.ScrapePod(ctx, "kube-system", c.Name+"-"+node, c.Port)
}

// ScrapePod reads /metrics on port of a pod that serves them as the
// control-plane components do (HTTPS, delegated authentication), such as a
// kube-scheduler the suite runs as a pod of its own.
func (s *Scraper) ScrapePod(ctx context.Context, namespace, pod string, port int) (Families, error) {
	transport, upgrader, err := spdy.RoundTripperFor(s.config)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(s.client.CoreV1().RESTClient().Post().Resource("pods").Namespace(namespace).Name(pod).SubResource("portforward").URL().String())
	if err != nil {
		return nil, err
	}
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, u)
	stop, ready := make(chan struct{}), make(chan struct{})
	defer close(stop)
	fw, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{fmt.Sprintf("0:%d", port)}, stop, ready, io.Discard, io.Discard)
	if err != nil {
		return nil, err
	}
	errs := make(chan error, 1)
	go func() { errs <- fw.ForwardPorts() }()
	select {
	case <-ready:
	case err := <-errs:
		return nil, fmt.Errorf("port-forward to %s: %w", pod, err)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	ports, err := fw.GetPorts()
	if err != nil {
		return nil, err
	}
	// The component's serving certificate is self-signed at start-up (kubeadm
	// gives it no CA), so the server cannot be verified; the client is.
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d/metrics", ports[0].Local), nil)
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s /metrics: %w", pod, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("GET %s /metrics: %s: %s", pod, resp.Status, strings.TrimSpace(string(body)))
	}
	return Parse(resp.Body)
}
