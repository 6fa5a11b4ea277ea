package edge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// decodeParams decodes ProtoJSON params into v. Field names may be
// lowerCamelCase or snake_case; unknown fields are ignored. Free-form
// values (metadata, data parts, struct params) keep their keys.
//
// A field given in both spellings is an error, as duplicate fields are in
// ProtoJSON; otherwise which one wins would depend on map order.
func decodeParams(raw json.RawMessage, v any) error {
	if bytes.IndexByte(raw, '_') >= 0 {
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber() // numbers pass through unchanged
		var tree any
		if err := d.Decode(&tree); err != nil {
			return err
		}
		tree, err := camelKeys(tree)
		if err != nil {
			return err
		}
		b, err := json.Marshal(tree)
		if err != nil {
			return err
		}
		raw = b
	}
	return json.Unmarshal(raw, v)
}

// freeForm names fields whose values are client data, not protocol fields.
var freeForm = map[string]bool{"metadata": true, "data": true, "params": true}

func camelKeys(v any) (any, error) {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, val := range t {
			ck := snakeToCamel(k)
			if _, dup := out[ck]; dup {
				return nil, fmt.Errorf("field %q given twice (as camelCase and snake_case)", ck)
			}
			if freeForm[ck] {
				out[ck] = val
				continue
			}
			cv, err := camelKeys(val)
			if err != nil {
				return nil, err
			}
			out[ck] = cv
		}
		return out, nil
	case []any:
		for i := range t {
			cv, err := camelKeys(t[i])
			if err != nil {
				return nil, err
			}
			t[i] = cv
		}
		return t, nil
	}
	return v, nil
}

func snakeToCamel(s string) string {
	if !strings.Contains(s, "_") || strings.HasPrefix(s, "@") {
		return s
	}
	var b strings.Builder
	up := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' {
			up = b.Len() > 0
			continue
		}
		if up && c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		up = false
		b.WriteByte(c)
	}
	return b.String()
}
