package containerdtest

import (
	"context"
	"testing"
	"time"
)

// TestStartImport: the private daemon serves, the hand-built image imports
// under its name, and the cleanup finds nothing left.
func TestStartImport(t *testing.T) {
	d := Start(t)
	name := BusyboxImage(t, d)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	img, err := d.Client.GetImage(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if img.Name() != Image {
		t.Fatalf("image %q, want %q", img.Name(), Image)
	}
	ok, err := img.IsUnpacked(ctx, "overlayfs")
	if err != nil || !ok {
		t.Fatalf("unpacked %v, %v; want true", ok, err)
	}
}
