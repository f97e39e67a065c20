package main

import (
	"cmp"
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

// processStart is when the process started (near enough: when its package was initialized), for the
// console's server page.
var processStart = time.Now()

// serverInfo returns what the console's server page shows of a server of cfg and cat: its version, start,
// store (the catalogue's, in cfg.dataDir) and listeners, the console's at consoleURL. The API's and the
// metrics' are cfg.addr and cfg.metricsAddr: to list the ports chosen for a port 0, serve sets them to the
// addresses it bound before it calls startConsole.
func serverInfo(cfg serveConfig, cat *catalog.Catalog, version, consoleURL string) func() fifoqweb.ServerInfo {
	listeners := []fifoqweb.Listener{{Name: "SQS and SNS API", Addr: listenURL(cfg.addr)}}
	if cfg.metricsAddr != "" {
		listeners = append(listeners, fifoqweb.Listener{Name: "metrics and health", Addr: listenURL(cfg.metricsAddr) + "metrics"})
	}
	console := "console"
	switch {
	case cfg.consoleReadOnly && cfg.credentials != nil:
		console += " (read-only, login)"
	case cfg.consoleReadOnly:
		console += " (read-only)"
	case cfg.credentials != nil:
		console += " (login)"
	}
	listeners = append(listeners, fifoqweb.Listener{Name: console, Addr: consoleURL})
	sync := "before each acknowledgement (--sync ack)"
	if cfg.syncEvery > 0 {
		sync = "every " + cfg.syncEvery.String() + " (--sync " + cfg.syncEvery.String() + "): a power loss loses at most that much"
	}
	return func() fifoqweb.ServerInfo {
		info := fifoqweb.ServerInfo{Version: version, Started: processStart, Listeners: listeners}
		if st := cat.Store(); st != nil {
			info.Store = &fifoqweb.StoreInfo{Path: cmp.Or(cfg.dataDir, st.String()), Sync: sync, Health: st.Health()}
		}
		return info
	}
}

// listenURL returns the URL of a listener's address: http://host:port/, or http://0.0.0.0:port/ for an
// address of every interface (":port").
func listenURL(addr string) string {
	if host, port, err := net.SplitHostPort(addr); err == nil && host == "" {
		addr = net.JoinHostPort("0.0.0.0", port)
	}
	return "http://" + addr + "/"
}

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
	url = urlOf(ln.Addr().String()) + "/" // a URL a user can open: 127.0.0.1 for an address on every interface
	version := "fifoq " + shortVersion(debug.ReadBuildInfo)
	console := fifoqweb.NewCatalog(cat, append([]fifoqweb.Option{fifoqweb.WithReadOnly(cfg.consoleReadOnly),
		fifoqweb.WithVersion(version), fifoqweb.WithServerInfo(serverInfo(cfg, cat, version, url))}, opts...)...)
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
