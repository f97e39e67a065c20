package fifoq_test

// The checks of README.md and docs/*.md: every Go snippet is a copy of compiled code, no page cites a
// document the repository does not hold, and every relative link reaches a file (and a heading) that
// exists.

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"
)

// docPages returns README.md and the pages of docs/, relative to the repository's root (this package's
// directory).
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join("docs", "*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, pages, "docs/ holds no page")
	return append([]string{"README.md"}, pages...)
}

// A snippet is a fenced code block of a page.
type snippet struct {
	page  string
	line  int      // of the opening fence, counting from 1
	lang  string   // the fence's info string: "go", "sh", ...
	lines []string // the block's lines, without the fences
}

var fenceRE = regexp.MustCompile("^\\s*```\\s*([A-Za-z0-9_+-]*)")

// snippets returns the fenced code blocks of a page's text, fences indented by list items included.
func snippets(page, text string) ([]snippet, error) {
	var (
		out    []snippet
		cur    *snippet
		indent string // before the opening fence: a list item's code block is indented
	)
	for i, l := range strings.Split(text, "\n") {
		if cur == nil {
			if m := fenceRE.FindStringSubmatch(l); m != nil {
				cur = &snippet{page: page, line: i + 1, lang: m[1]}
				indent = l[:strings.Index(l, "```")]
			}
			continue
		}
		if strings.TrimSpace(l) == "```" {
			out = append(out, *cur)
			cur = nil
			continue
		}
		cur.lines = append(cur.lines, strings.TrimPrefix(l, indent))
	}
	if cur != nil {
		return nil, fmt.Errorf("%s:%d: a code block is not closed", page, cur.line)
	}
	return out, nil
}

// normalize drops the indentation and the trailing space of each line, so a snippet matches the code it
// copies at any depth of nesting.
func normalize(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimSpace(l)
	}
	return out
}

// isElision reports whether a snippet's line stands for code left out: a comment line that starts with
// "// ...".
func isElision(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), "// ...") }

// parts splits a snippet at its elisions into the runs of lines that must each appear, in order, in one
// file.
func parts(lines []string) [][]string {
	var (
		out [][]string
		cur []string
	)
	for _, l := range normalize(lines) {
		if isElision(l) {
			if len(cur) > 0 {
				out = append(out, cur)
			}
			cur = nil
			continue
		}
		cur = append(cur, l)
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	// Blank lines at either end of a part say nothing about the code.
	for i, p := range out {
		for len(p) > 0 && p[0] == "" {
			p = p[1:]
		}
		for len(p) > 0 && p[len(p)-1] == "" {
			p = p[:len(p)-1]
		}
		out[i] = p
	}
	return out
}

// indexRun returns the index in file at or after from where run starts, or -1.
func indexRun(file []string, run []string, from int) int {
	if len(run) == 0 {
		return from
	}
	for i := from; i+len(run) <= len(file); i++ {
		match := true
		for j := range run {
			if file[i+j] != run[j] {
				match = false
				break
			}
		}
		if match {
			return i
		}
	}
	return -1
}

// copiedIn reports whether every part of a snippet appears in file, in order.
func copiedIn(file []string, ps [][]string) bool {
	at := 0
	for _, p := range ps {
		i := indexRun(file, p, at)
		if i < 0 {
			return false
		}
		at = i + len(p)
	}
	return true
}

// longestPrefix returns how many of the snippet's first part's lines appear, from its first line, at some
// place in file.
func longestPrefix(file []string, p []string) int {
	best := 0
	for i := range file {
		n := 0
		for n < len(p) && i+n < len(file) && file[i+n] == p[n] {
			n++
		}
		best = max(best, n)
	}
	return best
}

// codeFiles returns the Go files a snippet may copy: every _test.go file of the repository and every
// examples/*/main.go, by path, with their normalized lines. The modules of the workspace are read from
// disk, so a snippet can copy a package with a go.mod of its own. This file is left out: its tests hold
// snippets that must not match.
func codeFiles(t *testing.T) map[string][]string {
	t.Helper()
	files := make(map[string][]string)
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		example := filepath.Base(filepath.Dir(filepath.Dir(path))) == "examples" && d.Name() == "main.go"
		if (!strings.HasSuffix(path, "_test.go") && !example) || path == "docs_test.go" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files[path] = normalize(strings.Split(string(b), "\n"))
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, files)
	return files
}

// uncopied returns a message for each Go snippet of pages that is not a copy of code in files.
func uncopied(pages map[string]string, files map[string][]string) (problems []string, checked int, err error) {
	names := make([]string, 0, len(pages))
	for name := range pages {
		names = append(names, name)
	}
	sort.Strings(names)
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, name := range names {
		ss, err := snippets(name, pages[name])
		if err != nil {
			return nil, 0, err
		}
		for _, s := range ss {
			if s.lang != "go" {
				continue
			}
			checked++
			ps := parts(s.lines)
			if len(ps) == 0 {
				problems = append(problems, fmt.Sprintf("%s:%d: an empty Go snippet", s.page, s.line))
				continue
			}
			found := false
			for _, p := range paths {
				if copiedIn(files[p], ps) {
					found = true
					break
				}
			}
			if found {
				continue
			}
			bestPath, best := "", -1
			for _, p := range paths {
				if n := longestPrefix(files[p], ps[0]); n > best {
					bestPath, best = p, n
				}
			}
			hint := "no file has its first line"
			if best > 0 && best < len(ps[0]) {
				hint = fmt.Sprintf("closest: %s has its first %d lines, then not %q", bestPath, best, ps[0][best])
			} else if best > 0 {
				hint = fmt.Sprintf("closest: %s has its first run of lines, but not what follows the \"// ...\"", bestPath)
			}
			problems = append(problems, fmt.Sprintf("%s:%d: the Go snippet that starts %q is not a copy of code in any _test.go file or examples/*/main.go (%s); "+
				"copy it from an example or test that compiles, or write one (example_docs_test.go)", s.page, s.line, ps[0][0], hint))
		}
	}
	return problems, checked, nil
}

// report fails the test with one line for each problem, if there are any.
func report(t *testing.T, what string, problems []string) {
	t.Helper()
	if len(problems) > 0 {
		t.Errorf("%s in README.md and docs/:\n%s", what, strings.Join(problems, "\n"))
	}
}

// readPages returns the text of each page.
func readPages(t *testing.T) map[string]string {
	t.Helper()
	out := make(map[string]string)
	for _, p := range docPages(t) {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		out[p] = string(b)
	}
	return out
}

// TestDocsSnippetsCompile checks that every Go snippet of README.md and docs/*.md is a copy of code that
// compiles: its lines, indentation aside, appear in that order in an example or test file (or, around a
// line "// ...", its runs of lines do, in order, in one file).
func TestDocsSnippetsCompile(t *testing.T) {
	problems, checked, err := uncopied(readPages(t), codeFiles(t))
	require.NoError(t, err)
	require.Greater(t, checked, 0, "no Go snippet found in README.md and docs/")
	t.Logf("%d Go snippets checked", checked)
	report(t, "Go snippets that are not copies of compiled code", problems)
}

// TestDocsSnippetCheckFails shows that the check above fails on a snippet that is not a copy, naming the
// page, the line and the snippet's first line, and passes on one that is.
func TestDocsSnippetCheckFails(t *testing.T) {
	files := map[string][]string{
		"x_test.go": normalize(strings.Split("func ExampleX() {\n\tq, err := fifoq.New(\"a\")\n\tif err != nil {\n\t\tlog.Fatal(err)\n\t}\n\tfmt.Println(q.Name())\n}", "\n")),
	}
	for _, tc := range []struct {
		name, page, want string
	}{
		{"copy", "# T\n\n```go\nq, err := fifoq.New(\"a\")\nif err != nil {\n    log.Fatal(err)\n}\n```\n", ""},
		{"copy with an elision", "```go\nq, err := fifoq.New(\"a\")\n// ... checks\nfmt.Println(q.Name())\n```\n", ""},
		{"shell is not checked", "```sh\ngo test ./...\n```\n", ""},
		{"a changed line", "text\n\n```go\nq, err := fifoq.New(\"a\")\nif err != nil {\n\tpanic(err)\n}\n```\n",
			`page.md:3: the Go snippet that starts "q, err := fifoq.New(\"a\")" is not a copy of code in any _test.go file or examples/*/main.go (closest: x_test.go has its first 2 lines, then not "panic(err)")`},
		{"undefined names", "```go\nr := fifoqtest.Drain(t, q, handle, opts)\n```\n",
			`page.md:1: the Go snippet that starts "r := fifoqtest.Drain(t, q, handle, opts)" is not a copy of code in any _test.go file or examples/*/main.go (no file has its first line)`},
		{"parts out of order", "```go\nfmt.Println(q.Name())\n// ...\nq, err := fifoq.New(\"a\")\n```\n",
			`page.md:1: the Go snippet that starts "fmt.Println(q.Name())" is not a copy`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			problems, _, err := uncopied(map[string]string{"page.md": tc.page}, files)
			require.NoError(t, err)
			if tc.want == "" {
				require.Empty(t, problems)
				return
			}
			require.Len(t, problems, 1)
			require.Contains(t, problems[0], tc.want)
		})
	}
	_, _, err := uncopied(map[string]string{"page.md": "```go\nx := 1\n"}, files)
	require.ErrorContains(t, err, "page.md:1: a code block is not closed")
}

// forbidden are references to documents the repository does not hold (the project's own design notes and
// specification), which a reader cannot follow.
var forbidden = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\bspec [0-9]`),
	regexp.MustCompile(`§`),
	regexp.MustCompile(`API\.md`),
	regexp.MustCompile(`DESIGN\.md`),
	regexp.MustCompile(`DURABILITY\.md`),
	regexp.MustCompile(`(?i)\bseed 0`),
}

// foreignReferences returns a message for each line of a page that cites a document the repository does not
// hold.
func foreignReferences(page, text string) []string {
	var out []string
	for i, l := range strings.Split(text, "\n") {
		for _, re := range forbidden {
			if m := re.FindString(l); m != "" {
				out = append(out, fmt.Sprintf("%s:%d: %q cites a document the repository does not hold: say the rule in words", page, i+1, m))
			}
		}
	}
	return out
}

// TestDocsCiteOnlyTheRepository checks that no page cites the specification, the design notes or the seeds
// the project was built from, which are not in the repository.
func TestDocsCiteOnlyTheRepository(t *testing.T) {
	pages := readPages(t)
	var problems []string
	for _, name := range sortedNames(pages) {
		problems = append(problems, foreignReferences(name, pages[name])...)
	}
	report(t, "references to documents the repository does not hold", problems)

	require.Len(t, foreignReferences("p.md", "as spec 5.3 says\nsee §12 and API.md\nok\nseed 004"), 4)
	require.Empty(t, foreignReferences("p.md", "the specification of SQS; FIFOQ_CRASH_SEED"))
}

func sortedNames(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// linkRE matches a Markdown link or image: [text](target) or [text](target "title").
var linkRE = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// headingAnchors returns the anchors GitHub gives the headings of a Markdown text: lower case, punctuation
// dropped, spaces as hyphens, a repeated anchor numbered.
func headingAnchors(text string) map[string]bool {
	out := make(map[string]bool)
	seen := make(map[string]int)
	inCode := false
	for _, l := range strings.Split(text, "\n") {
		if fenceRE.MatchString(l) {
			inCode = !inCode
			continue
		}
		if inCode || !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(l, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteRune('-')
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// brokenLinks returns a message for each relative link of a page whose file does not exist, or whose
// anchor names no heading of the Markdown page it points to. read returns a file's text, or an error.
func brokenLinks(page, text string, read func(string) (string, error)) []string {
	var out []string
	inCode := false
	for i, l := range strings.Split(text, "\n") {
		if fenceRE.MatchString(l) {
			inCode = !inCode
			continue
		}
		if inCode {
			continue
		}
		for _, m := range linkRE.FindAllStringSubmatch(l, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), filepath.FromSlash(file))
			}
			body, err := read(path)
			if err != nil {
				out = append(out, fmt.Sprintf("%s:%d: link %q: %s does not exist", page, i+1, target, path))
				continue
			}
			if anchor != "" && strings.HasSuffix(path, ".md") && !headingAnchors(body)[anchor] {
				out = append(out, fmt.Sprintf("%s:%d: link %q: %s has no heading #%s", page, i+1, target, path, anchor))
			}
		}
	}
	return out
}

// readPath returns the text of a file, or "" for a directory.
func readPath(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if st.IsDir() {
		return "", nil
	}
	b, err := os.ReadFile(path)
	return string(b), err
}

// TestDocsLinks checks that every relative link of README.md and docs/*.md reaches a file of the
// repository, and a heading of it when the link names one.
func TestDocsLinks(t *testing.T) {
	pages := readPages(t)
	var problems []string
	for _, name := range sortedNames(pages) {
		problems = append(problems, brokenLinks(name, pages[name], readPath)...)
	}
	report(t, "broken links", problems)

	files := map[string]string{"docs/a.md": "# Deviations from SQS, and why\n## Run\n## Run\n", "go.mod": "module x"}
	read := func(p string) (string, error) {
		if s, ok := files[filepath.ToSlash(p)]; ok {
			return s, nil
		}
		return "", os.ErrNotExist
	}
	require.Empty(t, brokenLinks("README.md", "[a](docs/a.md#deviations-from-sqs-and-why) [b](go.mod) [c](docs/a.md#run-1) [d](https://x.org/y)", read))
	require.Equal(t, []string{
		`README.md:1: link "docs/b.md": docs/b.md does not exist`,
		`README.md:2: link "docs/a.md#run-2": docs/a.md has no heading #run-2`,
		`docs/a.md:1: link "../DESIGN.txt": DESIGN.txt does not exist`,
	}, append(brokenLinks("README.md", "[b](docs/b.md)\n[c](docs/a.md#run-2)\n```\n[x](nowhere)\n```", read),
		brokenLinks("docs/a.md", "[d](../DESIGN.txt)", read)...))
}
