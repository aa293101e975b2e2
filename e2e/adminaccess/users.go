// SPDX-License-Identifier: Apache-2.0

package adminaccess

// Users other than the cluster admin that specs act as.

import (
	"context"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	draclient "k8s.io/dynamic-resource-allocation/client"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/kep5018/adminaccess-conformance/e2e/builder"
)

// namespaceAdmin is a user who may create claims, templates and pods in one
// namespace (and read it) but not change namespaces.
func namespaceAdmin(ctx context.Context, f *framework.Framework) *builder.Builder {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	ns := f.Namespace.Name
	user := "e2e-namespace-admin-" + ns
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "claims-and-pods", Namespace: ns},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"resource.k8s.io"}, Resources: []string{"resourceclaims", "resourceclaimtemplates"}, Verbs: []string{"*"}},
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"*"}},
		},
	}
	_, err := e.Client.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{})
	framework.ExpectNoError(err)
	_, err = e.Client.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "claims-and-pods", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: user}},
	}, metav1.CreateOptions{})
	framework.ExpectNoError(err)
	cfg := rest.CopyConfig(e.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	client, err := kubernetes.NewForConfig(cfg)
	framework.ExpectNoError(err)
	b := newBuilder(ctx, f)
	b.Client, b.DRA = client, draclient.New(client)
	// RBAC is cached by the authorizer; wait until the role is in force.
	gomega.Eventually(ctx, func(ctx context.Context) error {
		_, err := b.DRA.ResourceClaims(ns).List(ctx, metav1.ListOptions{})
		return err
	}).WithTimeout(allocateTimeout).Should(gomega.Succeed())
	return b
}
