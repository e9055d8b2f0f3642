package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// decodeJSONFile decodes the JSON file at path into into, refusing keys
// into does not have. Its errors name the file, the line and column, and
// the key where it can tell.
func decodeJSONFile(path string, into any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err = dec.Decode(into)
	if err == nil {
		if dec.More() {
			rest := bytes.TrimLeft(data[dec.InputOffset():], " \t\r\n")
			return fmt.Errorf("%s:%s: more after the JSON value", path, position(data, int64(len(data)-len(rest))))
		}
		return nil
	}
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		// Offset is just past the character that is wrong.
		return fmt.Errorf("%s:%s: %v", path, position(data, syntax.Offset-1), syntax)
	case errors.As(err, &typ):
		// Offset is just past the value of the wrong type.
		return fmt.Errorf("%s:%s: key %q: want %s, got %s", path, position(data, typ.Offset-1), typ.Field, typ.Type, typ.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		key := strings.TrimPrefix(err.Error(), "json: unknown field ")
		at := dec.InputOffset()
		if i := bytes.Index(data, []byte(key)); i >= 0 {
			at = int64(i)
		}
		return fmt.Errorf("%s:%s: unknown key %s", path, position(data, at), key)
	case errors.Is(err, io.EOF):
		return fmt.Errorf("%s: empty, want a JSON object", path)
	}
	return fmt.Errorf("%s: %w", path, err)
}

// position is offset's line and column in data, from 1.
func position(data []byte, offset int64) string {
	offset = min(max(offset, 0), int64(len(data)))
	before := data[:offset]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(offset) - bytes.LastIndexByte(before, '\n')
	return fmt.Sprintf("%d:%d", line, col)
}
