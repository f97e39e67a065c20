package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

// buildVersion describes the binary from its build information: the module's version ("v0.1.0" when
// installed with go install ...@v0.1.0; a pseudo-version or "(devel)" when built from a clone), then the
// VCS revision, its time and "modified" when the work tree had changes, as the go command stamps them.
// read is debug.ReadBuildInfo, or a stand-in in tests.
func buildVersion(read func() (*debug.BuildInfo, bool)) string {
	bi, ok := read()
	if !ok {
		return "(unknown: the binary has no build information)"
	}
	parts := []string{bi.Main.Version}
	if bi.Main.Version == "" {
		parts[0] = "(devel)" // as the go command says of a main module without a version
	}
	settings := make(map[string]string)
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if rev := settings["vcs.revision"]; rev != "" {
		r := "revision " + rev
		if t := settings["vcs.time"]; t != "" {
			r += " (" + t + ")"
		}
		if settings["vcs.modified"] == "true" {
			r += ", modified"
		}
		parts = append(parts, r)
	}
	return strings.Join(parts, ", ")
}

// shortVersion is the version the console shows: the module's version, with the revision's first 12
// characters when the version alone does not name the code (a build from a clone).
func shortVersion(read func() (*debug.BuildInfo, bool)) string {
	bi, ok := read()
	if !ok {
		return ""
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && (v == "(devel)" || strings.Contains(v, "+dirty")) {
			v += " " + s.Value[:min(12, len(s.Value))]
		}
	}
	return v
}

// runVersion runs "fifoq version": one line on stdout, the module version and the VCS revision, then the Go
// version and the platform.
func runVersion(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		fmt.Fprintf(stderr, "fifoq version: unexpected argument %q\n", args[0])
		return errUsage
	}
	fmt.Fprintf(stdout, "fifoq %s; %s %s/%s\n", buildVersion(debug.ReadBuildInfo), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}
