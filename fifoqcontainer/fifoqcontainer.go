package fifoqcontainer

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
)

const (
	// Port is the port fifoq serve listens on in the image, published on a random port of the Docker host.
	Port = "9324/tcp"
	// DefaultAccountID is the account of the queues unless WithAccountID says otherwise, as in their URLs.
	DefaultAccountID = "000000000000"
	// DefaultRegion is the region of the queues unless WithRegion says otherwise.
	DefaultRegion = "us-east-1"
	// configPath is where WithConfigFile puts the config file in the container.
	configPath = "/etc/fifoq/fifoq.json"
	// startupTimeout bounds the wait for /health.
	startupTimeout = time.Minute
)

// A Container is fifoq serve running in a container. Its methods are safe for concurrent use.
type Container struct {
	testcontainers.Container        // the running container: Host, MappedPort, Inspect, Exec, Logs, Terminate, ...
	port                     string // the container's port: Port, or the host's with WithHostNetwork
	accountID                string
}

// Run starts the image img (such as "fifoq:dev", which "bash .ci/image" builds) with the options, and
// waits until its /health answers 200. As in testcontainers-go, a container that started is returned
// even with an error, so that the caller can terminate it (testcontainers.CleanupContainer does).
func Run(ctx context.Context, img string, opts ...testcontainers.ContainerCustomizer) (*Container, error) {
	req, port, err := newRequest(img, opts...)
	if err != nil {
		return nil, err
	}
	ctr, err := testcontainers.GenericContainer(ctx, req)
	var c *Container
	if ctr != nil {
		c = &Container{Container: ctr, port: port, accountID: DefaultAccountID}
		if id := req.Env["FIFOQ_ACCOUNT_ID"]; id != "" {
			c.accountID = id
		}
	}
	if err != nil {
		return c, fmt.Errorf("generic container: %w", err)
	}
	return c, nil
}

// newRequest returns the request Run gives testcontainers, and the container port to reach the server on.
func newRequest(img string, opts ...testcontainers.ContainerCustomizer) (testcontainers.GenericContainerRequest, string, error) {
	req := testcontainers.GenericContainerRequest{
		ContainerRequest: testcontainers.ContainerRequest{
			Image:        img,
			ExposedPorts: []string{Port},
			Env:          map[string]string{},
		},
		Started: true,
	}
	for _, opt := range opts {
		if err := opt.Customize(&req); err != nil {
			return req, "", fmt.Errorf("customize: %w", err)
		}
	}
	port := Port
	if addr := req.Env["FIFOQ_ADDR"]; addr != "" {
		_, p, err := net.SplitHostPort(addr)
		if err != nil || p == "0" || p == "" {
			return req, "", fmt.Errorf("FIFOQ_ADDR %q: want host:port with a port other than 0", addr)
		}
		port = p + "/tcp"
	}
	if req.WaitingFor == nil {
		req.WaitingFor = wait.ForHTTP("/health").WithPort(port).WithStartupTimeout(startupTimeout)
	}
	return req, port, nil
}

// EndpointURL returns the URL of the SQS endpoint, to give an AWS SDK as its endpoint (BaseEndpoint,
// endpoint_url, endpoint): "http://" and the host and port the container is reached on from the test.
// Queue URLs in the server's answers use the host a request came in on, so they work from there too.
func (c *Container) EndpointURL(ctx context.Context) (string, error) {
	host, err := c.Host(ctx)
	if err != nil {
		return "", fmt.Errorf("host: %w", err)
	}
	port, err := c.MappedPort(ctx, c.port)
	if err != nil {
		return "", fmt.Errorf("mapped port %s: %w", c.port, err)
	}
	return "http://" + net.JoinHostPort(host, port.Port()), nil
}

// QueueURL returns the URL of the queue name of the container's account, on EndpointURL.
func (c *Container) QueueURL(ctx context.Context, name string) (string, error) {
	endpoint, err := c.EndpointURL(ctx)
	if err != nil {
		return "", err
	}
	return endpoint + "/" + c.accountID + "/" + strings.TrimPrefix(name, "/"), nil
}
