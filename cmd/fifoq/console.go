package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/fifoqweb"
)

// checkConsole accepts the console flags of cfg: a --console-addr beyond loopback needs --allow-remote, and
// --credentials, whose keys are the console's logins.
func checkConsole(cfg serveConfig) error {
	if cfg.consoleAddr == "" {
		if cfg.consoleReadOnly {
			return errors.New("--console-read-only without --console-addr: there is no console")
		}
		return nil
	}
	if err := checkAddr("--console-addr", cfg.consoleAddr, cfg.allowRemote); err != nil {
		return err
	}
	host, _, _ := net.SplitHostPort(cfg.consoleAddr)
	if !isLoopback(host) && cfg.credentials == nil {
		return fmt.Errorf("--console-addr %s is not a loopback address: a console beyond this machine needs "+
			"--credentials, whose access keys are its logins", cfg.consoleAddr)
	}
	return nil
}

// startConsole serves the web console of the queues and topics of cat on cfg.consoleAddr, if given, with opts
// too, until stop is called (at most cfg.shutdownTimeout later it closes the connections left), and returns
// its URL ("" for none). Its redrives are the catalogue's move tasks, as those of StartMessageMoveTask are.
// With credentials, every request needs an HTTP basic login: an access key id and its secret.
func startConsole(ctx context.Context, lc *net.ListenConfig, cfg serveConfig, cat *catalog.Catalog,
	logger *slog.Logger, opts ...fifoqweb.Option) (url string, stop func(), err error) {
	if cfg.consoleAddr == "" {
		return "", func() {}, nil
	}
	ln, err := lc.Listen(ctx, "tcp", cfg.consoleAddr)
	if err != nil {
		return "", nil, fmt.Errorf("--console-addr: %w", err)
	}
	console := fifoqweb.NewCatalog(cat, append([]fifoqweb.Option{fifoqweb.WithReadOnly(cfg.consoleReadOnly),
		fifoqweb.WithVersion("fifoq " + shortVersion(debug.ReadBuildInfo))}, opts...)...)
	var h http.Handler = console
	if cfg.credentials != nil {
		h = basicAuth(maps.Clone(cfg.credentials), h, newLoginThrottle(time.Now), logger)
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    cfg.maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if serr := srv.Serve(ln); !errors.Is(serr, http.ErrServerClosed) {
			logger.Error("console stopped", "addr", ln.Addr().String(), "error", serr)
		}
	}()
	url = "http://" + ln.Addr().String() + "/"
	logger.Info("serving console", "addr", ln.Addr().String(), "url", url, "read_only", cfg.consoleReadOnly,
		"login", cfg.credentials != nil)
	return url, func() {
		sctx, cancel := context.WithTimeout(context.Background(), cfg.shutdownTimeout)
		defer cancel()
		if serr := srv.Shutdown(sctx); serr != nil {
			srv.Close()
		}
		<-done
		// The console's redrives are the server's: Close leaves them to the server, which halts them at its
		// own Close and, on a store, resumes them when it is opened again.
		if cerr := console.Close(); cerr != nil {
			logger.Error("ending the console's redrives", "error", cerr)
		}
	}, nil
}
