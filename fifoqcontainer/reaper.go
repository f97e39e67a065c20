package fifoqcontainer

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sync"
	"time"

	"github.com/containerd/errdefs"
	"github.com/testcontainers/testcontainers-go"
)

// ErrReaperUnavailable is the error of Run when testcontainers' reaper (Ryuk) is enabled but its image is
// not on the Docker host and cannot be pulled (a machine offline). Its message names the variable that turns
// the reaper off, TESTCONTAINERS_RYUK_DISABLED=true, with which each test terminates its own container
// (testcontainers.CleanupContainer).
var ErrReaperUnavailable = errors.New("fifoqcontainer: the reaper's image cannot be had")

// reaperPullTimeout bounds the pull of the reaper's image that Run tries when the image is missing:
// testcontainers would retry it for up to 15 minutes.
const reaperPullTimeout = 10 * time.Second

// reaperChecked holds the result of the first reaper check that ran to its end: the testcontainers
// configuration is read once per process, so the answer does not change.
var reaperChecked struct {
	mu   sync.Mutex
	done bool
	err  error
}

// checkReaper returns nil when the reaper is disabled or its image is there or could be pulled within
// reaperPullTimeout, and an error wrapping ErrReaperUnavailable otherwise. Without a Docker daemon it returns
// nil, for testcontainers to say so.
func checkReaper(ctx context.Context) error {
	reaperChecked.mu.Lock()
	defer reaperChecked.mu.Unlock()
	if reaperChecked.done {
		return reaperChecked.err
	}
	provider, err := testcontainers.NewDockerProvider()
	if err != nil {
		return nil
	}
	defer provider.Close()
	cfg := provider.Config().Config
	if cfg.RyukDisabled {
		reaperChecked.done = true
		return nil
	}
	//lint:ignore SA1019 it is the image the reaper runs (testcontainers sets it from the internal value that replaced it), and nothing else exports that value
	img := testcontainers.ReaperDefaultImage
	if cfg.HubImageNamePrefix != "" { // as testcontainers names a Docker Hub image
		img = path.Join(cfg.HubImageNamePrefix, img)
	}
	if _, err := provider.Client().ImageInspect(ctx, img); err == nil || !errdefs.IsNotFound(err) {
		return nil // there, or a question for testcontainers to answer
	}
	pctx, cancel := context.WithTimeout(ctx, reaperPullTimeout)
	defer cancel()
	start := time.Now()
	perr := provider.PullImage(pctx, img)
	if ctx.Err() != nil {
		return ctx.Err() // the caller's context ended: nothing learnt
	}
	reaperChecked.done = true
	if perr == nil { // a pull can end without an error and without the image: its errors are in its stream
		if _, err := provider.Client().ImageInspect(ctx, img); err != nil {
			perr = fmt.Errorf("the pull ended without the image: %w", err)
		}
	}
	if perr != nil {
		if errors.Is(perr, context.DeadlineExceeded) {
			perr = fmt.Errorf("no image after %v", time.Since(start).Round(time.Second))
		}
		reaperChecked.err = fmt.Errorf("%w: testcontainers' reaper (Ryuk) is enabled, and its image %s is not on the Docker host "+
			"and could not be pulled (%v): set TESTCONTAINERS_RYUK_DISABLED=true to run without it (each test then terminates "+
			"its own container: testcontainers.CleanupContainer), or pull the image first", ErrReaperUnavailable, img, perr)
	}
	return reaperChecked.err
}
