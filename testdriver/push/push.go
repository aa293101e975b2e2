// SPDX-License-Identifier: Apache-2.0

// Package push puts the test driver's image (or the suite's, or either
// built for several platforms, as an index) into a registry and checks
// that a reference resolves there, for clusters whose nodes pull images
// instead of having an archive loaded into them (a vendor's cluster, CI
// with a registry). It uses go-containerregistry; the archive is the one
// testdriver/image writes.
//
// Plain HTTP is used only for a registry on a loopback or private address
// (clusters/registryhost, the rule a cluster the suite creates gives its
// nodes too); every other registry is reached over HTTPS, and a redirect to
// plain HTTP elsewhere is refused.
package push

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/kep5018/adminaccess-conformance/clusters/registryhost"
	"github.com/kep5018/adminaccess-conformance/testdriver/image"
)

// nameOptions mark a reference's registry insecure (plain HTTP allowed)
// when it is on a loopback or private address.
func nameOptions(ref string) []name.Option {
	if registryhost.PlainHTTP(registryhost.Of(ref)) {
		return []name.Option{name.Insecure}
	}
	return nil
}

// errPlainHTTP is returned by httpsOnly for a plain-HTTP request to a host
// that is not loopback or private.
type errPlainHTTP struct{ host string }

func (e errPlainHTTP) Error() string {
	return fmt.Sprintf("plain HTTP to %s refused: only a registry on a loopback or private address may be reached without TLS", e.host)
}

// httpsOnly refuses plain HTTP except to loopback and private addresses.
// go-containerregistry itself falls back to HTTP for a few more names
// (*.local); this keeps to the rule above, redirects included.
type httpsOnly struct{ next http.RoundTripper }

func (t httpsOnly) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != "https" && !registryhost.PlainHTTP(req.URL.Host) {
		return nil, errPlainHTTP{req.URL.Host}
	}
	return t.next.RoundTrip(req)
}

func remoteOptions(ctx context.Context) []remote.Option {
	return []remote.Option{
		remote.WithContext(ctx),
		remote.WithAuthFromKeychain(authn.DefaultKeychain),
		remote.WithTransport(httpsOnly{remote.DefaultTransport}),
	}
}

// Reference is where the built image (tag "kind-e2e/testdriver:abc") goes
// in REGISTRY ("localhost:5001/dra"): "localhost:5001/dra/testdriver:abc".
// REGISTRY is a registry host with an optional path, or a Docker Hub
// namespace; a REGISTRY that is no repository prefix is refused in one line.
func Reference(registry, tag string) (string, error) {
	prefix := strings.TrimSuffix(strings.TrimSpace(registry), "/")
	if err := checkPrefix(prefix); err != nil {
		return "", fmt.Errorf("REGISTRY=%q is not a registry and path such as localhost:5001/dra or registry.example.com/team: %s", registry, err)
	}
	// A trailing colon is a version left out, as a missing colon is; pkg/name
	// would call it malformed and hide what is missing.
	src, err := name.NewTag(strings.TrimSuffix(tag, ":"), name.WithDefaultTag(""))
	if err != nil {
		return "", fmt.Errorf("image tag %q: %v", tag, err)
	}
	if src.TagStr() == "" {
		return "", fmt.Errorf("image tag %q has no version", tag)
	}
	ref := prefix + "/" + path.Base(src.RepositoryStr()) + ":" + src.TagStr()
	if _, err := name.NewTag(ref, nameOptions(ref)...); err != nil {
		return "", fmt.Errorf("REGISTRY=%q gives %q, which is not an image reference: %v", registry, ref, err)
	}
	return ref, nil
}

// checkPrefix says what is wrong with a repository prefix, in a few words.
// registryhost tells the registry host from the path; the distribution
// spec's grammar of each path component (registryhost.PathComponent) is
// checked here, as pkg/name checks only the characters.
func checkPrefix(prefix string) error {
	if prefix == "" {
		return errors.New("it is empty")
	}
	if strings.Contains(prefix, "://") {
		return errors.New("give no scheme (http:// or https://)")
	}
	if strings.ContainsAny(prefix, "@ \t") {
		return errors.New("it holds a digest or a space")
	}
	// Every component but the first is path, whatever the first is:
	// checked before it, each gets its own reason.
	parts := strings.Split(prefix, "/")
	for _, p := range parts[1:] {
		if err := checkComponent(p); err != nil {
			return err
		}
	}
	// The first component is a registry host where Docker would read one
	// (registryhost.OfPrefix, as the cluster tool reads --registry), and
	// otherwise a Docker Hub namespace, a path component like the rest.
	if registryhost.OfPrefix(prefix) != "" {
		return nil
	}
	if strings.ContainsAny(parts[0], ".:") {
		return fmt.Errorf("%q is neither a registry host nor a path component", parts[0])
	}
	return checkComponent(parts[0])
}

// checkComponent says what is wrong with one component of a repository path.
func checkComponent(p string) error {
	switch {
	case p == "":
		return errors.New("it has an empty path component")
	case strings.Contains(p, ":"):
		return fmt.Errorf("path component %q holds a tag; give the path only", p)
	case !registryhost.PathComponent(p):
		return fmt.Errorf("path component %q must be lowercase letters and digits, joined by . _ __ or -", p)
	}
	return nil
}

// Push writes the image tag from the docker-save archive to reference and
// returns reference pinned by the digest the registry stored.
func Push(ctx context.Context, archive, tag, reference string) (string, error) {
	img, err := fromArchive(archive, tag)
	if err != nil {
		return "", err
	}
	dst, err := name.NewTag(reference, nameOptions(reference)...)
	if err != nil {
		return "", fmt.Errorf("reference %q: %w", reference, err)
	}
	digest, err := img.Digest()
	if err != nil {
		return "", fmt.Errorf("reading %s from %s: %w", tag, archive, err)
	}
	if err := remote.Write(dst, img, remoteOptions(ctx)...); err != nil {
		return "", fmt.Errorf("pushing %s: %s", reference, oneLine(err))
	}
	return reference + "@" + digest.String(), nil
}

// fromArchive is the image tag of a docker-save archive.
func fromArchive(archive, tag string) (v1.Image, error) {
	src, err := name.NewTag(tag)
	if err != nil {
		return nil, fmt.Errorf("image tag %q: %w", tag, err)
	}
	img, err := tarball.ImageFromPath(archive, &src)
	if err != nil {
		return nil, fmt.Errorf("reading %s from %s: %w", tag, archive, err)
	}
	return img, nil
}

// Resolve checks that reference names an image in its registry and returns
// it pinned by digest (a tag is kept: host/path/name:tag@sha256:...). The
// error names the reference and says, in one line, whether the registry did
// not answer, is no registry, refused, or has no such image.
func Resolve(ctx context.Context, reference string) (string, error) {
	ref, err := name.ParseReference(reference, nameOptions(reference)...)
	if err != nil {
		return "", fmt.Errorf("%s: not an image reference: %s", reference, oneLine(err))
	}
	reg := ref.Context().RegistryStr()
	desc, err := remote.Head(ref, remoteOptions(ctx)...)
	if err != nil {
		return "", readError(reference, reg, err)
	}
	return pinned(reference, ref, desc), nil
}

// readError says in one line why reading reference from its registry reg
// failed: it did not answer, is no registry, refused, or has no such image.
func readError(reference, reg string, err error) error {
	var te *transport.Error
	var plain errPlainHTTP
	switch {
	case errors.As(err, &te) && te.Request != nil && te.Request.URL.Path == "/v2/":
		return fmt.Errorf("%s: %s answers but is not a container registry (HTTP %d on /v2/)", reference, reg, te.StatusCode)
	case errors.As(err, &te) && te.StatusCode == http.StatusNotFound:
		return fmt.Errorf("%s: no such image in the registry %s", reference, reg)
	case errors.As(err, &te):
		return fmt.Errorf("%s: the registry %s refused it (HTTP %d %s)", reference, reg, te.StatusCode, http.StatusText(te.StatusCode))
	case errors.As(err, &plain):
		return fmt.Errorf("%s: the registry %s did not answer over HTTPS, and plain HTTP is only for a loopback or private address", reference, reg)
	default:
		return fmt.Errorf("%s: the registry %s did not answer: %s", reference, reg, oneLine(err))
	}
}

// PushPlatforms writes the images of one or several platforms (each an
// archive testdriver/image built) to reference and returns it pinned by
// digest: one image as Push does, several as an index that lists each
// under its platform, from which each node's runtime pulls its own.
func PushPlatforms(ctx context.Context, images []image.Built, reference string) (string, error) {
	switch len(images) {
	case 0:
		return "", errors.New("no image to push")
	case 1:
		return Push(ctx, images[0].Archive, images[0].Tag, reference)
	}
	// The archives' images are Docker manifests: their index is a Docker
	// manifest list, which every runtime that pulls them reads.
	idx := mutate.IndexMediaType(empty.Index, types.DockerManifestList)
	for _, b := range images {
		img, err := fromArchive(b.Archive, b.Tag)
		if err != nil {
			return "", err
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: b.Platform.OS, Architecture: b.Platform.Arch}}})
	}
	dst, err := name.NewTag(reference, nameOptions(reference)...)
	if err != nil {
		return "", fmt.Errorf("reference %q: %w", reference, err)
	}
	digest, err := idx.Digest()
	if err != nil {
		return "", err
	}
	if err := remote.WriteIndex(dst, idx, remoteOptions(ctx)...); err != nil {
		return "", fmt.Errorf("pushing %s: %s", reference, oneLine(err))
	}
	return reference + "@" + digest.String(), nil
}

// Platforms are the platforms (linux/arm64) an image in a registry serves:
// each of an index's entries, or a single image's config. What was pushed
// before (SUITE_IMAGE, TESTDRIVER_IMAGE) is compared with the nodes so.
func Platforms(ctx context.Context, reference string) ([]string, error) {
	ref, err := name.ParseReference(reference, nameOptions(reference)...)
	if err != nil {
		return nil, fmt.Errorf("%s: not an image reference: %s", reference, oneLine(err))
	}
	desc, err := remote.Get(ref, remoteOptions(ctx)...)
	if err != nil {
		return nil, readError(reference, ref.Context().RegistryStr(), err)
	}
	if desc.MediaType.IsIndex() {
		idx, err := desc.ImageIndex()
		if err != nil {
			return nil, fmt.Errorf("%s: %s", reference, oneLine(err))
		}
		m, err := idx.IndexManifest()
		if err != nil {
			return nil, fmt.Errorf("%s: %s", reference, oneLine(err))
		}
		var out []string
		for _, d := range m.Manifests {
			if d.Platform != nil {
				out = append(out, d.Platform.OS+"/"+d.Platform.Architecture)
			}
		}
		return out, nil
	}
	img, err := desc.Image()
	if err != nil {
		return nil, fmt.Errorf("%s: %s", reference, oneLine(err))
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("%s: reading its config: %s", reference, oneLine(err))
	}
	return []string{cfg.OS + "/" + cfg.Architecture}, nil
}

// pinned is reference with the digest the registry gave; a reference that
// names a digest already is returned as it is.
func pinned(reference string, ref name.Reference, desc *v1.Descriptor) string {
	if _, ok := ref.(name.Digest); ok {
		return reference
	}
	return reference + "@" + desc.Digest.String()
}

// oneLine is err's text on one line.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
