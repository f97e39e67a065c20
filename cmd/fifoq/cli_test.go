package main

// Tests of the command line's frictions: a misspelt flag or command gets a suggestion and a one-line hint
// rather than the whole help; the help lists no alias as a flag of its own; config errors name the file,
// the line and the column (and hint at JSON for YAML) and exit 2; listen errors name their flag.

import (
	"bytes"
	"errors"
	"flag"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// runProcess runs the command as a process to its end and returns its exit status, stdout and stderr.
func runProcess(t *testing.T, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := command(t, env, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), out.String(), errOut.String()
	}
	require.NoError(t, err, "%v", args)
	return 0, out.String(), errOut.String()
}

func TestSuggestions(t *testing.T) {
	t.Parallel()
	flags := []string{"addr", "allow-remote", "data-dir", "config", "console-addr", "region", "account-id", "sync"}
	for _, tc := range []struct{ in, want string }{
		{"data-dri", "data-dir"}, // two letters swapped
		{"adr", "addr"},
		{"adddr", "addr"},
		{"confg", "config"},
		{"console", "console-addr"}, // the start of a flag
		{"regoin", "region"},
		{"acount-id", "account-id"},
		{"verbose", ""},
		{"x", ""},
		{"", ""},
	} {
		require.Equal(t, tc.want, closest(tc.in, flags), "closest(%q)", tc.in)
	}
	require.Equal(t, "; did you mean serve?", suggest("serv", commands))
	require.Equal(t, "; did you mean version?", suggest("verison", commands))
	require.Empty(t, suggest("frobnicate", commands))
	require.Equal(t, 1, editDistance("data-dri", "data-dir"))
	require.Equal(t, 3, editDistance("kitten", "sitting"))
}

// A misspelt flag prints one line with the flag it meant and a hint to -h, and exits 2; -h prints the whole
// help, which lists --account-id once (its alias --account in its text, not as a flag) and reads well.
func TestServeFlagHints(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--data-dri", "x"}, "fifoq serve: unknown flag --data-dri; did you mean --data-dir?\nRun 'fifoq serve -h' for the flags.\n"},
		{[]string{"serve", "-adr=127.0.0.1:0"}, "fifoq serve: unknown flag --adr; did you mean --addr?\nRun 'fifoq serve -h' for the flags.\n"},
		{[]string{"serve", "--verbose"}, "fifoq serve: unknown flag --verbose\nRun 'fifoq serve -h' for the flags.\n"},
		{[]string{"serve", "--log-level", "loud"}, "fifoq serve: invalid value \"loud\" for flag -log-level: slog: level string \"loud\": unknown name\nRun 'fifoq serve -h' for the flags.\n"},
	} {
		code, stdout, stderr := runProcess(t, nil, tc.args...)
		require.Equal(t, 2, code, "%v: stderr %s", tc.args, stderr)
		require.Empty(t, stdout, "%v", tc.args)
		require.Equal(t, tc.want, stderr, "%v: one line and the hint, not the help", tc.args)
	}

	code, _, stderr := runProcess(t, nil, "serv")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, `fifoq: unknown command "serv"; did you mean serve?`)
	code, _, stderr = runProcess(t, nil, "--addr", "x")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "fifoq: --addr before a command: flags come after it, as in fifoq serve --addr")

	var help bytes.Buffer
	require.ErrorIs(t, run(t.Context(), []string{"serve", "-h"}, noEnv, &help, &help), flag.ErrHelp)
	text := help.String()
	require.NotRegexp(t, `(?m)^  -account( |$)`, text, "the alias is no flag of its own in the help")
	require.Regexp(t, `(?m)^  -account-id id$`, text)
	require.Contains(t, text, "--account is the same flag")
	require.Contains(t, text, "default AWS region: that of a request whose credential scope and endpoint host name no region")
	require.NotContains(t, text, "host name none")

	// The alias still works, and so does -h after other flags.
	cfg, err := parseServe([]string{"-account", "123456789012"}, noEnv, &help)
	require.NoError(t, err)
	require.Equal(t, "123456789012", cfg.account)
	help.Reset()
	_, err = parseServe([]string{"--addr", "127.0.0.1:1", "-h"}, noEnv, &help)
	require.ErrorIs(t, err, flag.ErrHelp)
	require.Contains(t, help.String(), `(default "127.0.0.1:9324")`, "the help shows the defaults, not the values given")
}

// Errors of the config file name it with the line and the column, in words; YAML gets a hint; every one
// exits 2.
func TestConfigErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct{ name, content, want string }{
		{"fifoq.json", "{\"queues\": [\n  {\"name\": \"a\"},\n]}", "fifoq.json:3:1: invalid character ']' looking for beginning of value"},
		{"fifoq.json", "{\"queues\": [\n  {\"name\": \"a\", \"atributes\": {}}\n]}", `fifoq.json:2:17: unknown field "atributes"`},
		{"fifoq.json", "{\n  \"queues\": \"orders\"\n}", "fifoq.json:2:20: queues: want a list, not a string"},
		{"fifoq.json", "{\"queues\": [{\"name\": 7}]}", "fifoq.json:1:22: queues.name: want a string, not a number"},
		{"fifoq.json", "{\"queues\": [\n", "fifoq.json:2:1: the JSON ends early: a { or [ is not closed"},
		{"fifoq.json", "", "fifoq.json: the file is empty: want a JSON object"},
		{"fifoq.json", "{\"queues\": []}\n{}", "fifoq.json:2:1: data after the JSON object"},
		{"fifoq.json", "{\"queues\": [{\"name\": \"a\"},\n  {\"attributes\": {}}]}", "fifoq.json:2:3: queue 1 has no name"},
		{"fifoq.json", "{\"queues\": [\n {\"name\": \"a\", \"attributes\": {\"DelaySeconds\": [1]}}]}",
			"fifoq.json:2:2: queue a: attribute DelaySeconds: a list is not an attribute value"},
		{"fifoq.yaml", "queues:\n  - name: orders.fifo\n", "fifoq.yaml:1:1: invalid character 'q' looking for beginning of value " +
			`(the file must be JSON, as in {"queues": [{"name": "orders.fifo"}]}; YAML is not read)`},
		{"fifoq.yml", "{\"queues\": 1}", "fifoq.yml:1:12: queues: want a list, not a number (the file must be JSON"},
		{"config", "# queues\nqueues: []\n", "config:1:1: invalid character '#' looking for beginning of value (the file must be JSON"},
	} {
		path := dir + "/" + tc.name
		require.NoError(t, writeTo(path, tc.content))
		var stderr bytes.Buffer
		_, err := parseServe([]string{"--config", path}, noEnv, &stderr)
		require.ErrorIs(t, err, errUsage, "%q", tc.content)
		require.Contains(t, stderr.String(), "fifoq serve: config "+dir+"/"+tc.want, "%q", tc.content)
		require.Equal(t, 1, strings.Count(stderr.String(), "\n"), "%q: one line", tc.content)
	}
	require.NotContains(t, jsonError("config", "f.json", []byte(`{"queues": 1}`), errors.New("x")).Error(), "YAML",
		"a JSON file gets no YAML hint")

	// The credentials file too.
	creds := dir + "/creds.json"
	require.NoError(t, writeTo(creds, "{\"credentials\": [\n  {\"accessKeyId\": \"a\" \"secretAccessKey\": \"b\"}]}"))
	_, err := parseServe([]string{"--credentials", creds}, noEnv, &bytes.Buffer{})
	require.ErrorContains(t, err, "credentials "+creds+":2:23: invalid character '\"' after object key:value pair")
}

// A queue declared in the config file, by --queue or by FIFOQ_QUEUE whose attributes CreateQueue refuses
// stops the start with status 2, naming the file, the line and the column of the queue (or the flag or the
// variable and its value), the queue and the reason; the server never listens.
func TestServeDeclaredQueueErrors(t *testing.T) {
	t.Parallel()
	config := writeFile(t, "{\"queues\": [\n  {\"name\": \"ok\"},\n  {\"name\": \"jobs\", \"attributes\": {\"VisibilityTimeout\": \"lots\"}}\n]}")
	for _, tc := range []struct {
		env  []string
		args []string
		want string
	}{
		{nil, []string{"--config", config}, "fifoq serve: config " + config + ":3:3: create queue jobs: InvalidAttributeValue: Invalid value for the parameter VisibilityTimeout."},
		{nil, []string{"--queue", "x,DelaySeconds=9999"}, `fifoq serve: --queue "x,DelaySeconds=9999": create queue x: InvalidAttributeValue: Invalid value for the parameter DelaySeconds.`},
		{[]string{"FIFOQ_QUEUE=a;b,FifoQueue=false,ContentBasedDeduplication=true"}, nil, `fifoq serve: FIFOQ_QUEUE "b,FifoQueue=false,ContentBasedDeduplication=true": create queue b:`},
		{nil, []string{"--queue", "d,DelaySeconds=1", "--queue", "d,DelaySeconds=2"}, `fifoq serve: --queue "d,DelaySeconds=2": queue d declared twice, with other attributes: map[DelaySeconds:1] and map[DelaySeconds:2]`},
	} {
		code, stdout, stderr := runProcess(t, tc.env, append([]string{"serve", "--addr", "127.0.0.1:0"}, tc.args...)...)
		require.Equal(t, 2, code, "%v %v: stderr %s", tc.env, tc.args, stderr)
		require.Empty(t, stdout, "it never listened")
		require.Contains(t, stderr, tc.want, "%v %v", tc.env, tc.args)
	}
}

// An address in use names the flag of the listener that could not listen.
func TestServeListenErrorsNameTheFlag(t *testing.T) {
	t.Parallel()
	taken, err := new(net.ListenConfig).Listen(t.Context(), "tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer taken.Close()
	addr := taken.Addr().String()
	for _, flag := range []string{"--addr", "--metrics-addr", "--console-addr"} {
		args := []string{"serve", "--addr", "127.0.0.1:0", flag, addr}
		code, stdout, stderr := runProcess(t, nil, args...)
		require.Equal(t, 1, code, "%v: stderr %s", args, stderr)
		require.Empty(t, stdout)
		require.Contains(t, stderr, "fifoq: "+flag+": listen tcp "+addr+": bind: address already in use", "%v", args)
	}
}

// writeTo writes content to the file at path.
func writeTo(path, content string) error {
	return os.WriteFile(path, []byte(content), 0o600)
}
