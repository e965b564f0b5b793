package containerdtest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/containerd/containerd"
	"github.com/opencontainers/go-digest"
	ocispecs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// BusyboxPath is where Debian's busybox-static puts its binary.
const BusyboxPath = "/bin/busybox"

// Image is the name BusyboxImage imports its image under.
const Image = "gpugraph.test/busybox:latest"

// applets are linked to busybox in the image's /bin.
var applets = []string{"sh", "env", "cat", "echo", "ls", "sleep", "dd", "head", "test", "mkdir", "rm", "touch", "true", "false", "wc", "grep", "kill"}

// BusyboxImage builds an OCI image of Debian's static busybox, imports it
// into d's namespace, unpacks it for overlayfs and answers its name. It
// skips t (see Start) where busybox-static is not installed.
func BusyboxImage(t testing.TB, d *Daemon) string {
	t.Helper()
	return ImportBusybox(t, d.Client, Image, "sh")
}

// ImportBusybox is BusyboxImage into client c's namespace, under name, with
// cmd as the image's command: what a container runs when its runtime is
// given no arguments, as the node agent's runtime is.
func ImportBusybox(t testing.TB, c *containerd.Client, name string, cmd ...string) string {
	t.Helper()
	bin, err := os.ReadFile(BusyboxPath)
	if err != nil {
		skip(t, "busybox-static is not installed ("+BusyboxPath+")")
	}
	archive, err := Archive(bin, name, cmd...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	imgs, err := c.Import(ctx, bytes.NewReader(archive))
	if err != nil {
		t.Fatalf("import the image: %v", err)
	}
	for _, img := range imgs {
		if err := containerd.NewImage(c, img).Unpack(ctx, "overlayfs"); err != nil {
			t.Fatalf("unpack %s: %v", img.Name, err)
		}
	}
	return name
}

// Archive is an OCI image layout, as a tar archive, of one layer holding
// the static busybox binary bin as /bin/busybox with its applets linked to
// it; index.json names it name (io.containerd.image.name), which is what
// containerd's import reads; cmd is its config's Cmd.
func Archive(bin []byte, name string, cmd ...string) ([]byte, error) {
	var layer bytes.Buffer
	tw := tar.NewWriter(&layer)
	now := time.Unix(0, 0)
	for _, dir := range []string{"bin/", "tmp/", "etc/", "workspace/"} {
		mode := int64(0o755)
		if dir == "tmp/" {
			mode = 0o1777
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir, Mode: mode, ModTime: now}); err != nil {
			return nil, err
		}
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "bin/busybox", Mode: 0o755, Size: int64(len(bin)), ModTime: now}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(bin); err != nil {
		return nil, err
	}
	for _, a := range applets {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: "bin/" + a, Linkname: "busybox", Mode: 0o777, ModTime: now}); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	diffID := digest.FromBytes(layer.Bytes())
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(layer.Bytes()); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}

	config, err := json.Marshal(ocispec.Image{
		Platform: ocispec.Platform{Architecture: runtime.GOARCH, OS: "linux"},
		Config:   ocispec.ImageConfig{Env: []string{"PATH=/bin"}, Cmd: cmd, WorkingDir: "/"},
		RootFS:   ocispec.RootFS{Type: "layers", DiffIDs: []digest.Digest{diffID}},
	})
	if err != nil {
		return nil, err
	}
	configDesc := descriptor(ocispec.MediaTypeImageConfig, config)
	layerDesc := descriptor(ocispec.MediaTypeImageLayerGzip, gz.Bytes())
	manifest, err := json.Marshal(ocispec.Manifest{
		Versioned: ocispecs.Versioned{SchemaVersion: 2},
		MediaType: ocispec.MediaTypeImageManifest,
		Config:    configDesc,
		Layers:    []ocispec.Descriptor{layerDesc},
	})
	if err != nil {
		return nil, err
	}
	manifestDesc := descriptor(ocispec.MediaTypeImageManifest, manifest)
	manifestDesc.Platform = &ocispec.Platform{Architecture: runtime.GOARCH, OS: "linux"}
	manifestDesc.Annotations = map[string]string{"io.containerd.image.name": name, ocispec.AnnotationRefName: "latest"}
	index, err := json.Marshal(ocispec.Index{
		Versioned: ocispecs.Versioned{SchemaVersion: 2},
		MediaType: ocispec.MediaTypeImageIndex,
		Manifests: []ocispec.Descriptor{manifestDesc},
	})
	if err != nil {
		return nil, err
	}
	layout, err := json.Marshal(ocispec.ImageLayout{Version: ocispec.ImageLayoutVersion})
	if err != nil {
		return nil, err
	}

	var out bytes.Buffer
	aw := tar.NewWriter(&out)
	files := []struct {
		name string
		data []byte
	}{
		{ocispec.ImageLayoutFile, layout},
		{"index.json", index},
		{blobPath(configDesc), config},
		{blobPath(layerDesc), gz.Bytes()},
		{blobPath(manifestDesc), manifest},
	}
	for _, dir := range []string{"blobs/", "blobs/sha256/"} {
		if err := aw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir, Mode: 0o755, ModTime: now}); err != nil {
			return nil, err
		}
	}
	for _, f := range files {
		if err := aw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: 0o644, Size: int64(len(f.data)), ModTime: now}); err != nil {
			return nil, err
		}
		if _, err := aw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := aw.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func descriptor(mediaType string, data []byte) ocispec.Descriptor {
	return ocispec.Descriptor{MediaType: mediaType, Digest: digest.Digest(fmt.Sprintf("sha256:%x", sha256.Sum256(data))), Size: int64(len(data))}
}

func blobPath(d ocispec.Descriptor) string {
	return "blobs/sha256/" + d.Digest.Encoded()
}
