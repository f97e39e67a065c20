package fifoqcontainer_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
)

// TestMain turns testcontainers' reaper off unless the environment says otherwise: each test terminates its
// own container, and the reaper's image cannot be pulled on a machine offline. Nothing else is set: a
// container in the host's network is reached on loopback whatever testcontainers takes for the Docker host.
// A child process of offline_test.go gets the environment its test gives it, and nothing more.
func TestMain(m *testing.M) {
	if _, ok := os.LookupEnv("TESTCONTAINERS_RYUK_DISABLED"); !ok && os.Getenv(childEnv) == "" {
		os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	}
	code := m.Run()
	if removeNetwork != nil {
		removeNetwork()
	}
	os.Exit(code)
}

var (
	networkOnce   sync.Once
	networkErr    error
	removeNetwork func() // of the network placeholder networkPlaceholder made, once the tests end
)

// networkPlaceholder keeps testcontainers from making a bridge on a Docker that has none (dockerd
// --bridge=none, as .ci/run starts it: no bridge, no firewall rule): testcontainers attaches every
// container to Docker's "bridge" network, or else to a network "reaper_default", which it creates as a
// bridge when missing. A config-only network of that name is a placeholder with no interface on the host;
// the containers of these tests run in the host's network and join no other (WithHostNetwork). It is
// removed when the tests end.
func networkPlaceholder(ctx context.Context) error {
	provider, err := testcontainers.NewDockerProvider()
	if err != nil {
		return err
	}
	defer provider.Close()
	cli := provider.Client()
	list, err := cli.NetworkList(ctx, client.NetworkListOptions{})
	if err != nil {
		return err
	}
	for _, nw := range list.Items {
		if nw.Name == "bridge" || nw.Name == testcontainers.ReaperDefault {
			return nil
		}
	}
	created, err := cli.NetworkCreate(ctx, testcontainers.ReaperDefault, client.NetworkCreateOptions{ConfigOnly: true,
		Labels: map[string]string{"org.fifoq.test": "placeholder"}})
	if err != nil {
		return fmt.Errorf("creating the config-only network %s: %w", testcontainers.ReaperDefault, err)
	}
	removeNetwork = func() {
		p, err := testcontainers.NewDockerProvider()
		if err == nil {
			defer p.Close()
			_, err = p.Client().NetworkRemove(context.Background(), created.ID, client.NetworkRemoveOptions{})
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "removing the network %s: %v\n", testcontainers.ReaperDefault, err)
		}
	}
	return nil
}

var (
	imageOnce sync.Once
	imageName string
	imageErr  error
)

// testImage returns the image to test: FIFOQ_TEST_IMAGE when set (.ci/run sets it to the image .ci/image
// built), else one built once from the repository's Dockerfile, as .ci/image builds it. It skips the test,
// saying why, when no Docker daemon is reachable.
func testImage(t *testing.T) string {
	t.Helper()
	testcontainers.SkipIfProviderIsNotHealthy(t)
	networkOnce.Do(func() { networkErr = networkPlaceholder(context.Background()) })
	if networkErr != nil {
		t.Fatal(networkErr)
	}
	if img := os.Getenv("FIFOQ_TEST_IMAGE"); img != "" {
		return img
	}
	imageOnce.Do(func() { imageName, imageErr = buildImage(context.Background()) })
	if imageErr != nil {
		t.Fatalf("building the image from the Dockerfile: %v", imageErr)
	}
	return imageName
}

// buildImage builds the image from ../Dockerfile: the command, static, in a context with the Dockerfile and
// an empty data directory. The image stays, tagged fifoq:test, for the next run to replace.
func buildImage(ctx context.Context) (string, error) {
	dir, err := os.MkdirTemp("", "fifoq-image-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=auto", "-ldflags=-s -w", "-o", filepath.Join(dir, "fifoq"), ".")
	build.Dir = filepath.Join("..", "cmd", "fifoq")
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v: %s", err, out)
	}
	dockerfile, err := os.ReadFile(filepath.Join("..", "Dockerfile"))
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), dockerfile, 0o644); err != nil {
		return "", err
	}
	if err := os.Mkdir(filepath.Join(dir, "data"), 0o755); err != nil {
		return "", err
	}
	provider, err := testcontainers.NewDockerProvider()
	if err != nil {
		return "", err
	}
	defer provider.Close()
	return provider.BuildImage(ctx, &testcontainers.ContainerRequest{FromDockerfile: testcontainers.FromDockerfile{
		Context: dir, Repo: "fifoq", Tag: "test", KeepImage: true,
		BuildArgs: map[string]*string{"VERSION": ptr("test")},
	}})
}

func ptr[T any](v T) *T { return &v }

// freePort returns a loopback port that was free a moment ago, for a container in the host's network.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
