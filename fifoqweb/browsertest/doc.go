// Package browsertest holds the end-to-end tests of the fifoqweb console: they drive headless Chromium
// through the DevTools protocol (github.com/chromedp/chromedp) against a running server. It is a module of
// its own, not released, so that chromedp stays out of the fifoq module's requirements.
package browsertest
