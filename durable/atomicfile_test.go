package durable_test

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq/durable"
)

// TestWriteFile: WriteFile replaces a file's content with the permissions given (the umask does not reduce
// them), through a temporary file beside it that it leaves nothing of; a leftover of an earlier crash is
// replaced; a missing directory is an error that names the file and changes nothing. MkdirAll makes the
// missing directories.
func TestWriteFile(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "a", "b")
	require.NoError(t, durable.MkdirAll(dir, 0o700))
	info, err := os.Stat(dir)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), info.Mode().Perm())
	require.NoError(t, durable.MkdirAll(dir, 0o755), "there already")

	path := filepath.Join(dir, "key.pem")
	require.NoError(t, os.WriteFile(path+".tmp", []byte("what a crash left"), 0o644))
	require.NoError(t, durable.WriteFile(path, []byte("one"), 0o600))
	require.NoError(t, durable.WriteFile(path, []byte("two"), 0o640))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "two", string(b))
	info, err = os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o640), info.Mode().Perm())
	names, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, names, 1, "no temporary file left: %v", names)

	missing := filepath.Join(dir, "no", "such")
	err = durable.WriteFile(missing, []byte("x"), 0o600)
	require.ErrorIs(t, err, os.ErrNotExist)
	require.ErrorContains(t, err, missing)
}

// writeFileChild is the environment variable that makes TestWriteFileChild the child of
// TestWriteFilePowerCut: "durable" or "os", a space, and the directory to write in.
const writeFileChild = "FIFOQ_DURABLE_WRITEFILE_CHILD"

// writeFileContent is the content of the i-th write of TestWriteFileChild: its number, and 20 KB that it
// decides.
func writeFileContent(i int) string {
	return fmt.Sprintf("%08d", i) + strings.Repeat(string(rune('a'+i%26)), 20<<10)
}

// TestWriteFileChild is the child of TestWriteFilePowerCut; run otherwise, it does nothing. It makes the
// directory a/b, then writes the file a/b/f again and again, with durable.WriteFile (or, "os", with
// os.MkdirAll and os.WriteFile), printing "done i" after the i-th write returned, until it is killed.
func TestWriteFileChild(t *testing.T) {
	how, dir, ok := strings.Cut(os.Getenv(writeFileChild), " ")
	if !ok {
		return
	}
	sub := filepath.Join(dir, "a", "b")
	mkdir, write := durable.MkdirAll, durable.WriteFile
	if how == "os" {
		mkdir, write = os.MkdirAll, os.WriteFile
	}
	require.NoError(t, mkdir(sub, 0o700))
	out := bufio.NewWriter(os.Stdout)
	for i := 0; ; i++ {
		require.NoError(t, write(filepath.Join(sub, "f"), []byte(writeFileContent(i)), 0o600))
		fmt.Fprintf(out, "done %d\n", i)
		require.NoError(t, out.Flush())
	}
}

// TestWriteFilePowerCut: a process writes a file again and again with WriteFile, in a directory it made
// with MkdirAll, on the power-loss rig, and is killed at a random moment after some writes returned; then
// the power is cut. The file is then whole: the content of the last write that returned, or of the one
// under way, never empty, torn or missing; in both metadata modes. The same with os.MkdirAll and
// os.WriteFile, which sync nothing, loses the file every time (empty, or gone with its directory in the
// strict mode): the test can fail.
func TestWriteFilePowerCut(t *testing.T) {
	t.Parallel()
	for _, strict := range []bool{false, true} {
		for _, how := range []string{"durable", "os"} {
			mode := map[bool]string{false: "lenient", true: "strict"}[strict]
			t.Run(how+"/"+mode, func(t *testing.T) {
				t.Parallel()
				l := startLazyFS(t, strict)
				seed := rand.Uint64()
				rng := rand.New(rand.NewPCG(seed, 0))
				var failures []string
				rounds := map[string]int{"durable": 8, "os": 3}[how]
				for round := range rounds {
					dir := filepath.Join(l.mnt, strconv.Itoa(round))
					last := writeFileRound(t, dir, how, 1+rng.IntN(20), time.Duration(rng.IntN(2000))*time.Microsecond)
					_, err := l.cut()
					require.NoError(t, err)
					path := filepath.Join(dir, "a", "b", "f")
					b, err := os.ReadFile(path)
					got := "missing"
					switch {
					case err == nil && (string(b) == writeFileContent(last) || string(b) == writeFileContent(last+1)):
						info, err := os.Stat(path)
						require.NoError(t, err)
						if info.Mode().Perm() == 0o600 {
							continue
						}
						got = "mode " + info.Mode().Perm().String()
					case err == nil && len(b) == 0:
						got = "empty"
					case err == nil:
						got = fmt.Sprintf("%d bytes, %.8q", len(b), b)
					}
					failures = append(failures, fmt.Sprintf("round %d: write %d returned, and after the cut the file is %s", round, last, got))
				}
				if how == "os" {
					require.Len(t, failures, rounds, "seed %d: os.WriteFile syncs nothing: the rig must take every file back", seed)
					return
				}
				require.Empty(t, failures, "seed %d", seed)
			})
		}
	}
}

// writeFileRound runs TestWriteFileChild in dir, kills it after it reported writes done and after a
// further pause, and returns the number of the last write it reported done.
func writeFileRound(t *testing.T, dir, how string, writes int, pause time.Duration) int {
	t.Helper()
	require.NoError(t, durable.MkdirAll(dir, 0o755)) // durable: in the strict mode a cut would take it back
	cmd := exec.Command(os.Args[0], "-test.run=^TestWriteFileChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), writeFileChild+"="+how+" "+dir)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	sc := bufio.NewScanner(stdout)
	last := -1
	for last < writes-1 && sc.Scan() {
		n, err := strconv.Atoi(strings.TrimPrefix(sc.Text(), "done "))
		require.NoError(t, err, "the child's line %q", sc.Text())
		last = n
	}
	timer := time.NewTimer(pause)
	<-timer.C
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	for sc.Scan() { // what it reported before it died
		if n, err := strconv.Atoi(strings.TrimPrefix(sc.Text(), "done ")); err == nil {
			last = n
		}
	}
	werr := cmd.Wait()
	var exit *exec.ExitError
	require.ErrorAs(t, werr, &exit, "the child's stderr: %s", &stderr)
	require.Equal(t, writes-1, min(last, writes-1), "the child reported %d writes; its stderr: %s", last+1, &stderr)
	return last
}
