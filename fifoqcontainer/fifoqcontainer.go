package fifoqcontainer

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
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
	// loopback is the host:port the server listens on in the host's network (WithHostNetwork), which
	// EndpointURL returns as it is; "" for a published port.
	loopback  string
	accountID string
}

// Run starts the image img (such as "fifoq:dev", which "bash .ci/image" builds) with the options, and
// waits until its /health answers 200. As in testcontainers-go, a container that started is returned
// even with an error, so that the caller can terminate it (testcontainers.CleanupContainer does).
//
// Before it starts anything, Run checks that testcontainers' reaper (Ryuk), when enabled, can start: if
// its image is not on the Docker host and cannot be pulled within a few seconds (a machine offline),
// Run returns an error that matches [ErrReaperUnavailable] and names TESTCONTAINERS_RYUK_DISABLED=true,
// rather than let testcontainers retry the pull for up to 15 minutes.
func Run(ctx context.Context, img string, opts ...testcontainers.ContainerCustomizer) (*Container, error) {
	req, port, loopback, err := newRequest(img, opts...)
	if err != nil {
		return nil, err
	}
	if err := checkReaper(ctx); err != nil {
		return nil, err
	}
	ctr, err := testcontainers.GenericContainer(ctx, req)
	var c *Container
	if ctr != nil {
		c = &Container{Container: ctr, port: port, loopback: loopback, accountID: DefaultAccountID}
		if id := req.Env["FIFOQ_ACCOUNT_ID"]; id != "" {
			c.accountID = id
		}
	}
	if err != nil {
		return c, fmt.Errorf("generic container: %w", err)
	}
	return c, nil
}

// newRequest returns the request Run gives testcontainers, the container port to reach the server on, and,
// for a container in the host's network, the loopback host:port the server listens on ("" otherwise).
func newRequest(img string, opts ...testcontainers.ContainerCustomizer) (req testcontainers.GenericContainerRequest, port, loopback string, err error) {
	req = testcontainers.GenericContainerRequest{
		ContainerRequest: testcontainers.ContainerRequest{
			Image:        img,
			ExposedPorts: []string{Port},
			Env:          map[string]string{},
		},
		Started: true,
	}
	for _, opt := range opts {
		if err := opt.Customize(&req); err != nil {
			return req, "", "", fmt.Errorf("customize: %w", err)
		}
	}
	port = Port
	host := ""
	if addr := req.Env["FIFOQ_ADDR"]; addr != "" {
		h, p, err := net.SplitHostPort(addr)
		if err != nil || p == "0" || p == "" {
			return req, "", "", fmt.Errorf("FIFOQ_ADDR %q: want host:port with a port other than 0", addr)
		}
		port, host = p+"/tcp", h
	}
	if hostNetwork(&req) {
		// The server listens in the host's network: it is reached on loopback, whatever testcontainers takes
		// for the Docker host (inside a container, the gateway of a bridge network, which a Docker without
		// one cannot reach).
		if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
			host = "127.0.0.1"
		}
		loopback = net.JoinHostPort(host, strings.TrimSuffix(port, "/tcp"))
	}
	if req.WaitingFor == nil {
		health := wait.ForHTTP("/health").WithPort(port).WithStartupTimeout(startupTimeout)
		if loopback != "" {
			req.WaitingFor = onHost{health, host}
		} else {
			req.WaitingFor = health
		}
	}
	return req, port, loopback, nil
}

// hostNetwork reports whether req runs its container in the host's network (WithHostNetwork, or a host
// config modifier of the caller's that says so).
func hostNetwork(req *testcontainers.GenericContainerRequest) bool {
	if req.HostConfigModifier == nil {
		return false
	}
	var hc container.HostConfig
	req.HostConfigModifier(&hc)
	return hc.NetworkMode.IsHost()
}

// onHost is a wait strategy that asks the server on host rather than on the host testcontainers resolves:
// for a container in the host's network, whose server listens on loopback.
type onHost struct {
	*wait.HTTPStrategy
	host string
}

// WaitUntilReady waits as the HTTP strategy does, on s.host.
func (s onHost) WaitUntilReady(ctx context.Context, target wait.StrategyTarget) error {
	return s.HTTPStrategy.WaitUntilReady(ctx, hostTarget{target, s.host})
}

// hostTarget is a wait target whose Host is a given one.
type hostTarget struct {
	wait.StrategyTarget
	host string
}

func (t hostTarget) Host(context.Context) (string, error) { return t.host, nil }

// EndpointURL returns the URL of the SQS endpoint, to give an AWS SDK as its endpoint (BaseEndpoint,
// endpoint_url, endpoint): "http://" and the host and port the container is reached on from the test. In
// the host's network ([WithHostNetwork]) that is the loopback address the server listens on,
// http://127.0.0.1:port; otherwise the host testcontainers gives (Host) and the published port. Queue URLs
// in the server's answers use the host a request came in on, so they work from there too.
func (c *Container) EndpointURL(ctx context.Context) (string, error) {
	if c.loopback != "" {
		return "http://" + c.loopback, nil
	}
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
