package expect

import (
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func invalid(path, detail string) error {
	return apierrors.NewInvalid(schema.GroupKind{Group: "resource.k8s.io", Kind: "ResourceClaim"}, "c",
		field.ErrorList{field.Forbidden(field.NewPath("spec", "devices", "requests").Index(0).Child("adminAccess"), detail)})
}

func TestMatchForbiddenAt(t *testing.T) {
	const path, msg = "spec.devices.requests[0].adminAccess", "admin access to devices requires the `resource.kubernetes.io/admin-access: true` label on the containing namespace"
	m := MatchForbiddenAt(path, msg)
	if ok, _ := m.Match(invalid(path, msg)); !ok {
		t.Fatal("the exact denial must match")
	}
	for name, err := range map[string]error{
		"no error":      nil,
		"other message": invalid(path, "something else"),
		"plain error":   errors.New(msg),
		"forbidden 403": apierrors.NewForbidden(schema.GroupResource{}, "c", errors.New(msg)),
	} {
		if ok, _ := m.Match(err); ok {
			t.Errorf("%s must not match", name)
		}
	}
	if got := m.FailureMessage(nil); got == "" {
		t.Fatal("failure message")
	}
}

func TestCauseFields(t *testing.T) {
	if got := CauseFields(invalid("x", "y")); len(got) != 1 || got[0] != "spec.devices.requests[0].adminAccess" {
		t.Fatalf("fields %v", got)
	}
	if CauseFields(errors.New("plain")) != nil || CauseFields(nil) != nil {
		t.Fatal("no fields for a plain error or none")
	}
}
