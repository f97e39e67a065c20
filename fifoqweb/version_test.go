package fifoqweb

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// WithVersion shows the version in the header of every page, the error pages included; without it, no
// page has a version.
func TestWithVersion(t *testing.T) {
	t.Parallel()
	_, h := wtSetup(t, WithVersion("fifoq v1.2.3 <dev>"))
	c := &wtClient{t: t, h: h}
	for _, path := range []string{"", "queue?q=orders", "queue?q=nope"} {
		code, body := c.get(path)
		require.Contains(t, []int{http.StatusOK, http.StatusNotFound}, code, path)
		require.Contains(t, body, `<span class="version">fifoq v1.2.3 &lt;dev&gt;</span>`, "%s: the version, escaped", path)
	}
	_, h = wtSetup(t)
	c = &wtClient{t: t, h: h}
	_, body := c.get("")
	require.NotContains(t, body, `class="version"`, "no version given")
}
