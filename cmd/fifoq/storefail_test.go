package main

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
)

// /health answers 503 with the cause once the store failed, before the shutdown it starts.
func TestHealthStoreFailed(t *testing.T) {
	var failure atomic.Pointer[error]
	h := &healthHandler{storeErr: func() error {
		if p := failure.Load(); p != nil {
			return *p
		}
		return nil
	}}
	get := func() (int, string) {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/health", nil))
		return w.Code, w.Body.String()
	}
	code, body := get()
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "ok\n", body)
	err := fmt.Errorf("%w: /data: %w", fifoq.ErrStoreFailed, syscall.ENOSPC)
	failure.Store(&err)
	code, body = get()
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Equal(t, "fifoq: store failed: /data: no space left on device\n", body)
}

// When the store fails, serveHTTP shuts down as on a signal, once the request in progress has its answer,
// says so once (the store logged the failure) and returns it, for the process to exit non-zero.
func TestServeHTTPStoreFailed(t *testing.T) {
	t.Parallel()
	entered, failed := make(chan struct{}), make(chan struct{})
	var storeErr atomic.Pointer[error]
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-failed // the request in progress when the store fails
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	ln, err := new(net.ListenConfig).Listen(t.Context(), "tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var logs syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- serveHTTP(t.Context(), serveOptions{api: ln, handler: h, logger: slog.New(slog.NewTextHandler(&logs, nil)),
			timeout: time.Hour, maxHeaderBytes: 1 << 20, failed: failed, storeErr: func() error {
				if p := storeErr.Load(); p != nil {
					return *p
				}
				return nil
			}})
	}()
	resp := make(chan int, 1)
	go func() {
		r, err := http.Get("http://" + ln.Addr().String() + "/")
		if err != nil {
			resp <- 0
			return
		}
		io.Copy(io.Discard, r.Body) //nolint:errcheck
		r.Body.Close()
		resp <- r.StatusCode
	}()
	<-entered
	cause := fmt.Errorf("%w: /data: %w", fifoq.ErrStoreFailed, syscall.ENOSPC)
	storeErr.Store(&cause)
	close(failed)
	err = <-done
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.ErrorIs(t, err, fifoq.ErrStoreFailed)
	require.Equal(t, http.StatusServiceUnavailable, <-resp, "the request in progress got its answer")
	// The store logs its failure at Error; serveHTTP says once what it does about it.
	require.Equal(t, 1, strings.Count(logs.String(), "the store failed: shutting down"), logs.String())
	require.Zero(t, strings.Count(logs.String(), "level=ERROR"), logs.String())
	require.Contains(t, logs.String(), "stopped")
}
