package edge

import (
	"bytes"
	"encoding/json"
	"strings"
)

// decodeParams decodes ProtoJSON params into v. Field names may be
// lowerCamelCase or snake_case; unknown fields are ignored. Free-form
// values (metadata, data parts, struct params) keep their keys.
func decodeParams(raw json.RawMessage, v any) error {
	if bytes.IndexByte(raw, '_') >= 0 {
		var tree any
		if err := json.Unmarshal(raw, &tree); err != nil {
			return err
		}
		b, err := json.Marshal(camelKeys(tree))
		if err != nil {
			return err
		}
		raw = b
	}
	return json.Unmarshal(raw, v)
}

// freeForm names fields whose values are client data, not protocol fields.
var freeForm = map[string]bool{"metadata": true, "data": true, "params": true}

func camelKeys(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, val := range t {
			ck := snakeToCamel(k)
			if freeForm[ck] {
				out[ck] = val
				continue
			}
			out[ck] = camelKeys(val)
		}
		return out
	case []any:
		for i := range t {
			t[i] = camelKeys(t[i])
		}
		return t
	}
	return v
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
