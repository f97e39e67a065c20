package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"unicode/utf8"
)

// The errors of the JSON files of "fifoq serve" (--config and --credentials) name the file, the line and the
// column, as compilers do (FILE:LINE:COL: what is wrong), and a YAML file gets a hint that the file is JSON.

// position returns the line and column, counting from 1, of the byte at offset in data; the column counts
// characters, as editors do.
func position(data []byte, offset int64) (line, col int) {
	offset = min(max(offset, 0), int64(len(data)))
	before := data[:offset]
	line = 1 + bytes.Count(before, []byte("\n"))
	start := bytes.LastIndexByte(before, '\n') + 1
	return line, 1 + utf8.RuneCount(before[start:])
}

// where names a place of the file at path: "PATH:LINE:COL".
func where(path string, data []byte, offset int64) string {
	line, col := position(data, offset)
	return fmt.Sprintf("%s:%d:%d", path, line, col)
}

// jsonError turns an error of decoding the JSON file at path, whose content is data, into one that names the
// file, the line and the column where it can tell them, in words rather than in Go's types.
func jsonError(what, path string, data []byte, err error) error {
	var (
		syntax    *json.SyntaxError
		typeError *json.UnmarshalTypeError
		at        = int64(-1) // the offset the error is at, when known
		msg       = strings.TrimPrefix(err.Error(), "json: ")
	)
	switch {
	case errors.As(err, &syntax):
		at = max(syntax.Offset-1, 0) // the offending character was the last one read
	case errors.As(err, &typeError):
		at = max(typeError.Offset-1, 0) // the end of the value
		msg = fmt.Sprintf("%s: want %s, not %s", typeError.Field, kindOf(typeError.Type), article(typeError.Value))
	case errors.Is(err, io.EOF):
		msg = "the file is empty: want a JSON object"
	case errors.Is(err, io.ErrUnexpectedEOF):
		at, msg = int64(len(data)), "the JSON ends early: a { or [ is not closed"
	case strings.HasPrefix(msg, "unknown field "):
		// encoding/json does not say where: the first place the field's name is a key is.
		var name string
		if _, err := fmt.Sscanf(strings.TrimPrefix(msg, "unknown field "), "%q", &name); err == nil {
			at = keyOffset(data, name)
		}
	}
	if yamlLike(path, data) {
		msg += ` (the file must be JSON, as in {"queues": [{"name": "orders.fifo"}]}; YAML is not read)`
	}
	if at < 0 {
		return fmt.Errorf("%s %s: %s", what, path, msg)
	}
	return fmt.Errorf("%s %s: %s", what, where(path, data, at), msg)
}

// keyOffset returns the offset of the first place name is a key of an object in data ("name" then a colon),
// or -1.
func keyOffset(data []byte, name string) int64 {
	quoted, _ := json.Marshal(name)
	for from := 0; ; {
		i := bytes.Index(data[from:], quoted)
		if i < 0 {
			return -1
		}
		i += from
		if rest := bytes.TrimLeft(data[i+len(quoted):], " \t\r\n"); len(rest) > 0 && rest[0] == ':' {
			return int64(i)
		}
		from = i + len(quoted)
	}
}

// yamlLike reports whether the file at path looks like YAML rather than JSON: its name ends in .yaml or
// .yml, or its text does not begin with a JSON object.
func yamlLike(path string, data []byte) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml":
		return true
	}
	data = bytes.TrimLeft(data, " \t\r\n\ufeff")
	return len(data) > 0 && data[0] != '{' && data[0] != '['
}

// kindOf names a Go type of the config's structure as JSON calls it.
func kindOf(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64:
		return "a whole number"
	case reflect.Pointer:
		return kindOf(t.Elem())
	}
	return "a number"
}

// article puts "a" or "an" before what encoding/json calls a value: "string", "number", "array", ...
func article(v string) string {
	if v == "" {
		return "this value"
	}
	if strings.ContainsRune("aeiou", rune(v[0])) {
		return "an " + v
	}
	return "a " + v
}

// queueOffsets returns the offset of each element of the top-level "queues" list of a config file that
// decodes, in order, so that an error about a queue can name its line; nil if there is none.
func queueOffsets(data []byte) []int64 { return listOffsets(data, "queues") }

// listOffsets returns the offset of each element of the top-level list called name of a config file that
// decodes, in order; nil if there is none.
func listOffsets(data []byte, name string) []int64 { return memberListOffsets(data, 0, name) }

// memberListOffsets returns the offset in data of each element of the list called name, a member of the
// object that starts at offset at of data (an element of a top-level list, say), in order; nil if there is
// none.
func memberListOffsets(data []byte, at int64, name string) []int64 {
	if at < 0 || at > int64(len(data)) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data[at:]))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var out []int64
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return out
		}
		if k, _ := key.(string); !strings.EqualFold(k, name) {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return out
			}
			continue
		}
		if t, err := dec.Token(); err != nil || t != json.Delim('[') {
			return out
		}
		out = out[:0] // a later key of that name wins, as it does for encoding/json
		for dec.More() {
			off := at + dec.InputOffset()
			for off < int64(len(data)) && bytes.IndexByte([]byte(" \t\r\n,"), data[off]) >= 0 {
				off++
			}
			out = append(out, off)
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return out
			}
		}
		if _, err := dec.Token(); err != nil { // ']'
			return out
		}
	}
	return out
}
