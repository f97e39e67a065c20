package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// A command line with a mistake gets one line that names it, with a suggestion where a flag or a command
// is misspelt, and a hint to the help, rather than the whole help (which -h prints).

// commands are the commands of fifoq, for suggestions.
var commands = []string{"serve", "health", "version", "help"}

// parseError turns err, an error of fs.Parse other than flag.ErrHelp, into one line (an unknown flag gets
// the closest known one), and prints it to w with a hint to the help of cmd, rather than the whole help.
func parseError(w io.Writer, cmd string, fs *flag.FlagSet, err error) error {
	msg := flagMessage(fs, err)
	fmt.Fprintf(w, "%s: %s\nRun '%s -h' for the flags.\n", cmd, msg, cmd)
	return errors.New(msg)
}

// flagMessage is the message of err, an error of fs.Parse, on one line: an unknown flag gets the closest
// known one.
func flagMessage(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		name = strings.TrimLeft(name, "-")
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		msg = "unknown flag --" + name
		if s := closest(name, names); s != "" {
			msg += "; did you mean --" + s + "?"
		}
	}
	return msg
}

// suggest returns "; did you mean X?" for the command closest to name, or "".
func suggest(name string, candidates []string) string {
	if s := closest(name, candidates); s != "" {
		return "; did you mean " + s + "?"
	}
	return ""
}

// closest returns the candidate closest to name when one is close: a few edits away (a third of name's
// length, at least 1 and at most 3), or one that name (of 3 characters or more) is the start of; else "".
func closest(name string, candidates []string) string {
	best, bestDist := "", -1
	for _, c := range candidates {
		d := editDistance(name, c)
		if len(name) >= 3 && strings.HasPrefix(c, name) {
			d = min(d, 1)
		}
		if bestDist < 0 || d < bestDist {
			best, bestDist = c, d
		}
	}
	if bestDist < 0 || bestDist > max(1, min(3, len(name)/3)) {
		return ""
	}
	return best
}

// editDistance returns the number of insertions, deletions, substitutions and swaps of two neighbouring
// characters that turn a into b (the optimal string alignment distance): "data-dri" is 1 from "data-dir".
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// helpFlags returns a flag set that prints the help of fs without its aliases (flags that are another
// flag's second name, which that flag's help names).
func helpFlags(fs *flag.FlagSet, aliases ...string) *flag.FlagSet {
	help := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	help.SetOutput(io.Discard)
	fs.VisitAll(func(f *flag.Flag) {
		for _, a := range aliases {
			if f.Name == a {
				return
			}
		}
		help.Var(f.Value, f.Name, f.Usage)
	})
	return help
}
