package fifoqcontainer

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/testcontainers/testcontainers-go"
)

// WithConfigFile copies the JSON config file at path into the container and has the server create its
// queues at start (FIFOQ_CONFIG), as with ElasticMQ's queues block:
//
//	{"queues": [{"name": "orders.fifo", "attributes": {"ContentBasedDeduplication": true}}]}
func WithConfigFile(path string) testcontainers.CustomizeRequestOption {
	return func(req *testcontainers.GenericContainerRequest) error {
		if _, err := os.Stat(path); err != nil {
			return fmt.Errorf("config file: %w", err)
		}
		req.Files = append(req.Files, testcontainers.ContainerFile{HostFilePath: path, ContainerFilePath: configPath, FileMode: 0o444})
		return setEnv(req, "FIFOQ_CONFIG", configPath)
	}
}

// WithQueues has the server create queues at start, after those of a config file: each is a name with
// attributes, as --queue takes them ("orders.fifo,ContentBasedDeduplication=true", "jobs,VisibilityTimeout=60").
// A name ending in .fifo makes a FIFO queue. Given twice, the queues of both are created.
func WithQueues(queues ...string) testcontainers.CustomizeRequestOption {
	return func(req *testcontainers.GenericContainerRequest) error {
		for _, q := range queues {
			if strings.ContainsAny(q, ";\n") {
				return fmt.Errorf("queue %q: a queue cannot hold ; or a line break", q)
			}
		}
		if len(queues) == 0 {
			return nil
		}
		all := strings.Join(queues, ";")
		if prev := req.Env["FIFOQ_QUEUE"]; prev != "" {
			all = prev + ";" + all
		}
		return setEnv(req, "FIFOQ_QUEUE", all)
	}
}

// WithRegion sets the region of the queues declared and of requests that name none (FIFOQ_REGION).
// Defaults to us-east-1; a request signed for another region acts in that region.
func WithRegion(region string) testcontainers.CustomizeRequestOption {
	return func(req *testcontainers.GenericContainerRequest) error {
		return setEnv(req, "FIFOQ_REGION", region)
	}
}

// WithAccountID sets the account of the queues declared and of requests whose access key id is not an
// account id (FIFOQ_ACCOUNT_ID). Defaults to 000000000000.
func WithAccountID(id string) testcontainers.CustomizeRequestOption {
	return func(req *testcontainers.GenericContainerRequest) error {
		return setEnv(req, "FIFOQ_ACCOUNT_ID", id)
	}
}

// WithCredentials makes the server check the AWS Signature Version 4 of every request against one access
// key (FIFOQ_ACCESS_KEY_ID and FIFOQ_SECRET_ACCESS_KEY). Without it any credentials are accepted.
func WithCredentials(accessKeyID, secretAccessKey string) testcontainers.CustomizeRequestOption {
	return func(req *testcontainers.GenericContainerRequest) error {
		if accessKeyID == "" || secretAccessKey == "" {
			return fmt.Errorf("credentials: an access key needs an id and a secret")
		}
		if err := setEnv(req, "FIFOQ_ACCESS_KEY_ID", accessKeyID); err != nil {
			return err
		}
		return setEnv(req, "FIFOQ_SECRET_ACCESS_KEY", secretAccessKey)
	}
}

// WithHostNetwork runs the container in the host's network, the server listening on 127.0.0.1:port, in
// place of a published port: for a Docker without a bridge network, or a machine that allows traffic on
// loopback only. The port must be free. Run waits for /health on 127.0.0.1:port, and EndpointURL returns
// http://127.0.0.1:port, whatever testcontainers takes for the Docker host: no TESTCONTAINERS_HOST_OVERRIDE
// is needed.
func WithHostNetwork(port int) testcontainers.CustomizeRequestOption {
	return func(req *testcontainers.GenericContainerRequest) error {
		if port <= 0 || port > 65535 {
			return fmt.Errorf("host network: port %d, want 1 to 65535", port)
		}
		req.ExposedPorts = nil // nothing to publish in the host's network
		if err := testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.NetworkMode = "host"
		}).Customize(req); err != nil {
			return err
		}
		// A container in the host's network joins no other: testcontainers would attach it to its default
		// network when Docker has no "bridge" (dockerd --bridge=none), and Docker would fail the start.
		if err := testcontainers.WithEndpointSettingsModifier(func(settings map[string]*network.EndpointSettings) {
			clear(settings)
		}).Customize(req); err != nil {
			return err
		}
		return setEnv(req, "FIFOQ_ADDR", "127.0.0.1:"+strconv.Itoa(port))
	}
}

// setEnv sets an environment variable of the container; an empty value is refused, as it would leave the
// image's default in place without a word.
func setEnv(req *testcontainers.GenericContainerRequest, name, value string) error {
	if value == "" {
		return fmt.Errorf("%s: empty value", name)
	}
	if req.Env == nil {
		req.Env = map[string]string{}
	}
	req.Env[name] = value
	return nil
}
