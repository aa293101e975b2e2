// SPDX-License-Identifier: Apache-2.0

package expect

import (
	"errors"
	"strings"
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

func immutable(value any, detail string) error {
	return apierrors.NewInvalid(schema.GroupKind{Group: "resource.k8s.io", Kind: "ResourceClaim"}, "c",
		field.ErrorList{field.Invalid(field.NewPath("status", "allocation"), value, detail)})
}

// The promise holds whatever the validator printed; a second cause, another
// field, another type or no refusal breaks it.
func TestMatchInvalidAt(t *testing.T) {
	m := MatchInvalidAt("status.allocation")
	for name, err := range map[string]error{
		"hand-written": immutable(map[string]any{"Devices": 1}, "field is immutable"),
		"declarative":  immutable(nil, "field cannot be modified once set"),
	} {
		if ok, _ := m.Match(err); !ok {
			t.Errorf("%s must match", name)
		}
	}
	two := apierrors.NewInvalid(schema.GroupKind{Group: "resource.k8s.io", Kind: "ResourceClaim"}, "c", field.ErrorList{
		field.Invalid(field.NewPath("status", "allocation"), nil, "field is immutable"),
		field.Invalid(field.NewPath("status", "allocation"), nil, "field cannot be modified once set")})
	for name, err := range map[string]error{
		"no error":    nil,
		"two causes":  two,
		"other field": invalid("status.allocation", "x"),
		"plain error": errors.New("status.allocation: Invalid value: null: field is immutable"),
	} {
		if ok, _ := m.Match(err); ok {
			t.Errorf("%s must not match", name)
		}
	}
	if got := m.FailureMessage(nil); !strings.Contains(got, "the request was allowed") {
		t.Errorf("failure message %q", got)
	}
}

func TestMatchInvalidMessage(t *testing.T) {
	declarative := immutable(nil, "field cannot be modified once set")
	if ok, _ := MatchInvalidMessage("ResourceClaim", "c", "status.allocation", "null", true, "field cannot be modified once set", "v").Match(declarative); !ok {
		t.Fatalf("the declarative message must match: %v", declarative)
	}
	handwritten := immutable(map[string]any{"AdminAccess": false}, "field is immutable")
	if ok, _ := MatchInvalidMessage("ResourceClaim", "c", "status.allocation", `"AdminAccess":false`, false, "field is immutable", "v").Match(handwritten); !ok {
		t.Fatalf("the hand-written message must match: %v", handwritten)
	}
	for name, m := range map[string]interface{ Match(any) (bool, error) }{
		"other detail": MatchInvalidMessage("ResourceClaim", "c", "status.allocation", "null", true, "field is immutable", "v"),
		"other value":  MatchInvalidMessage("ResourceClaim", "c", "status.allocation", `"AdminAccess":true`, false, "field is immutable", "v"),
		"other name":   MatchInvalidMessage("ResourceClaim", "d", "status.allocation", "", false, "field is immutable", "v"),
		"other path":   MatchInvalidMessage("ResourceClaim", "c", "spec", "", false, "field is immutable", "v"),
	} {
		if ok, _ := m.Match(handwritten); ok {
			t.Errorf("%s must not match %v", name, handwritten)
		}
	}
	if got := MatchInvalidMessage("ResourceClaim", "c", "status.allocation", "null", true, "field cannot be modified once set", "the declarative check").FailureMessage(handwritten); !strings.Contains(got, "the declarative check") || !strings.Contains(got, "exactly \"null\"") {
		t.Errorf("failure message %q", got)
	}
}
