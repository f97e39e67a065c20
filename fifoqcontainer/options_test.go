package fifoqcontainer

import (
	"testing"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/stretchr/testify/require"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
)

// The request Run makes, option by option; these need no Docker.
func TestNewRequest(t *testing.T) {
	t.Parallel()
	req, port, loopback, err := newRequest("fifoq:dev")
	require.NoError(t, err)
	require.Equal(t, Port, port, "by default, the published port")
	require.Empty(t, loopback, "reached on the host testcontainers gives")
	require.Equal(t, "fifoq:dev", req.Image)
	require.Equal(t, []string{Port}, req.ExposedPorts)
	require.True(t, req.Started)
	require.Empty(t, req.Env, "the image's defaults")
	http, ok := req.WaitingFor.(*wait.HTTPStrategy)
	require.True(t, ok, "waits on /health: %T", req.WaitingFor)
	require.Equal(t, "/health", http.Path)
	require.Equal(t, "9324", http.Port.Port())

	req, port, loopback, err = newRequest("img", WithConfigFile("testdata/fifoq.json"), WithQueues("a", "b.fifo,ContentBasedDeduplication=true"),
		WithQueues("c"), WithRegion("eu-west-1"), WithAccountID("123456789012"), WithCredentials("AKID", "secret"), WithHostNetwork(40123))
	require.NoError(t, err)
	require.Equal(t, "40123/tcp", port)
	require.Equal(t, "127.0.0.1:40123", loopback, "in the host's network, reached where it listens")
	require.Equal(t, map[string]string{
		"FIFOQ_CONFIG": "/etc/fifoq/fifoq.json", "FIFOQ_QUEUE": "a;b.fifo,ContentBasedDeduplication=true;c",
		"FIFOQ_REGION": "eu-west-1", "FIFOQ_ACCOUNT_ID": "123456789012", "FIFOQ_ACCESS_KEY_ID": "AKID",
		"FIFOQ_SECRET_ACCESS_KEY": "secret", "FIFOQ_ADDR": "127.0.0.1:40123",
	}, req.Env)
	require.Equal(t, []testcontainers.ContainerFile{{HostFilePath: "testdata/fifoq.json", ContainerFilePath: "/etc/fifoq/fifoq.json", FileMode: 0o444}}, req.Files)
	require.Empty(t, req.ExposedPorts, "nothing published in the host's network")
	hc := &container.HostConfig{}
	req.HostConfigModifier(hc)
	require.Equal(t, container.NetworkMode("host"), hc.NetworkMode)
	endpoints := map[string]*network.EndpointSettings{"reaper_default": {}}
	req.EndpointSettingsModifier(endpoints)
	require.Empty(t, endpoints, "in the host's network, no other network")
	onLoopback, ok := req.WaitingFor.(onHost)
	require.True(t, ok, "waits on loopback, not on the host testcontainers resolves: %T", req.WaitingFor)
	require.Equal(t, "127.0.0.1", onLoopback.host)
	require.Equal(t, "/health", onLoopback.Path)
	require.Equal(t, "40123", onLoopback.Port.Port())

	// The host's network set by the caller's own modifier: the image's address, 0.0.0.0:9324, is reached on
	// 127.0.0.1.
	_, _, loopback, err = newRequest("img", testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) { hc.NetworkMode = "host" }))
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:9324", loopback)
	_, _, loopback, err = newRequest("img", testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) { hc.NetworkMode = "host" }),
		testcontainers.WithEnv(map[string]string{"FIFOQ_ADDR": "[::1]:9400"}))
	require.NoError(t, err)
	require.Equal(t, "[::1]:9400", loopback)

	// WithQueues alone, on a request without an environment yet.
	req, _, _, err = newRequest("img", WithQueues("only"))
	require.NoError(t, err)
	require.Equal(t, map[string]string{"FIFOQ_QUEUE": "only"}, req.Env)
	var bare testcontainers.GenericContainerRequest
	require.NoError(t, WithQueues("a", "b")(&bare))
	require.Equal(t, map[string]string{"FIFOQ_QUEUE": "a;b"}, bare.Env)

	// A wait strategy of the caller's stays.
	mine := wait.ForLog("listening")
	req, _, _, err = newRequest("img", testcontainers.WithWaitStrategy(mine))
	require.NoError(t, err)
	multi, ok := req.WaitingFor.(*wait.MultiStrategy)
	require.True(t, ok, "%T", req.WaitingFor)
	require.Equal(t, []wait.Strategy{mine}, multi.Strategies)

	for _, tc := range []struct {
		opt     testcontainers.CustomizeRequestOption
		wantErr string
	}{
		{WithConfigFile("testdata/none.json"), "config file: stat testdata/none.json: no such file or directory"},
		{WithQueues("a;b"), `queue "a;b": a queue cannot hold ; or a line break`},
		{WithRegion(""), "FIFOQ_REGION: empty value"},
		{WithCredentials("AKID", ""), "an access key needs an id and a secret"},
		{WithHostNetwork(0), "host network: port 0, want 1 to 65535"},
		{testcontainers.WithEnv(map[string]string{"FIFOQ_ADDR": "127.0.0.1:0"}), `FIFOQ_ADDR "127.0.0.1:0": want host:port with a port other than 0`},
	} {
		_, _, _, err := newRequest("img", tc.opt)
		require.ErrorContains(t, err, tc.wantErr)
	}
}
