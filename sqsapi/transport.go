package sqsapi

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
)

// inProcess is an http.RoundTripper that serves each request with the server's ServeHTTP, in the calling
// goroutine: no socket, no connection pool, and the request's context reaches the handler (a long poll
// ends when the caller gives up). A caller whose context ends during the request gets the context's error
// only when the action was cut short by it (and so did nothing); an action that was done returns its
// response, so that an SDK does not retry, and repeat, a send that was stored.
type inProcess struct{ s *Server }

func (t inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		defer req.Body.Close()
	}
	in := req.Clone(req.Context())
	if in.Host == "" {
		in.Host = req.URL.Host
	}
	if in.URL.Scheme == "" {
		in.URL.Scheme = "http"
	}
	in.RemoteAddr = "in-process"
	in.RequestURI = req.URL.RequestURI()
	in.Body = http.NoBody
	if req.Body != nil {
		in.Body = req.Body
	}
	if in.ContentLength == 0 && req.Body != nil && req.Body != http.NoBody {
		in.ContentLength = -1
	}

	w := &recorder{header: make(http.Header), status: http.StatusOK}
	t.s.ServeHTTP(w, in)
	if err := req.Context().Err(); err != nil && w.canceled {
		return nil, err // as net/http's transports do: a caller that gave up gets its context's error
	}
	w.header.Set("Content-Length", strconv.Itoa(w.body.Len()))
	return &http.Response{
		Status:        strconv.Itoa(w.status) + " " + http.StatusText(w.status),
		StatusCode:    w.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        w.header,
		Body:          io.NopCloser(bytes.NewReader(w.body.Bytes())),
		ContentLength: int64(w.body.Len()),
		Request:       req,
	}, nil
}

// recorder is the http.ResponseWriter of an in-process request.
type recorder struct {
	header      http.Header
	body        bytes.Buffer
	status      int
	wroteHeader bool
	canceled    bool // the action ended early because the request's context ended
}

func (w *recorder) Header() http.Header { return w.header }

func (w *recorder) WriteHeader(status int) {
	if !w.wroteHeader {
		w.status, w.wroteHeader = status, true
	}
}

func (w *recorder) Write(p []byte) (int, error) {
	w.wroteHeader = true
	return w.body.Write(p)
}
