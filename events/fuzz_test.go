package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/textproto"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/nats-io/nats.go"
)

// sampleEvents returns one valid event of each type, on one task.
func sampleEvents() []Event {
	ts := time.Date(2025, 6, 1, 12, 30, 45, 123456789, time.UTC)
	const task a2a.TaskID = "0197a0c4-7f0e-7d2a-9a51-3c1b0a9e7f21"
	const ctxID = "ctx-1"
	msg := &a2a.Message{
		ID:        "msg-1",
		Role:      a2a.MessageRoleUser,
		ContextID: ctxID,
		TaskID:    task,
		Parts:     a2a.ContentParts{a2a.NewTextPart("echo hi"), a2a.NewDataPart(map[string]any{"snake_key": 1.5})},
		Metadata:  map[string]any{"k": "v"},
	}
	reply := &a2a.Message{ID: "msg-2", Role: a2a.MessageRoleAgent, ContextID: ctxID, TaskID: task, Parts: a2a.ContentParts{a2a.NewTextPart("which one?")}}
	return []Event{
		{
			ID: "created-" + string(task), Type: TypeCreated, Tenant: DefaultTenant, TaskID: task, Time: ts,
			Body: &Created{Dialect: "1.0", Task: &a2a.Task{
				ID: task, ContextID: ctxID,
				Status:  a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: &ts},
				History: []*a2a.Message{msg},
			}},
		},
		{
			ID: "input-1", Type: TypeInput, Tenant: "acme", TaskID: task, Time: ts,
			Body: &Input{Message: msg},
		},
		{
			ID: "status-1", Type: TypeStatus, Tenant: DefaultTenant, TaskID: task, Time: ts, Lease: "lease-7",
			Body: &a2a.TaskStatusUpdateEvent{TaskID: task, ContextID: ctxID,
				Status:   a2a.TaskStatus{State: a2a.TaskStateInputRequired, Timestamp: &ts, Message: reply},
				Metadata: map[string]any{"n": 3.0}},
		},
		{
			ID: "artifact-1", Type: TypeArtifact, Tenant: DefaultTenant, TaskID: task, Time: ts, Lease: "lease-7",
			Body: &a2a.TaskArtifactUpdateEvent{TaskID: task, ContextID: ctxID, Append: true, LastChunk: true,
				Artifact: &a2a.Artifact{ID: "art-1", Name: "out", Parts: a2a.ContentParts{
					a2a.NewTextPart("hello"), a2a.NewRawPart([]byte{0, 1, 2}), a2a.NewFileURLPart("https://example.com/f", "text/plain"),
				}}},
		},
	}
}

// bodyJSON is the JSON of an event body, for comparing bodies.
func bodyJSON(t *testing.T, ev Event) string {
	t.Helper()
	b, err := json.Marshal(ev.Body)
	if err != nil {
		t.Fatalf("marshal %s body: %v", ev.Type, err)
	}
	return string(b)
}

// checkSameEvent fails unless got is want as read back from the stream.
func checkSameEvent(t *testing.T, got, want Event) {
	t.Helper()
	if got.Type != want.Type || got.TaskID != want.TaskID || got.Tenant != want.Tenant || got.ID != want.ID || got.Lease != want.Lease {
		t.Fatalf("Decode()=(type %q task %q tenant %q id %q lease %q), want (%q %q %q %q %q)",
			got.Type, got.TaskID, got.Tenant, got.ID, got.Lease, want.Type, want.TaskID, want.Tenant, want.ID, want.Lease)
	}
	if !got.Time.Equal(want.Time) {
		t.Fatalf("Decode().Time=%v, want %v", got.Time, want.Time)
	}
	if g, w := bodyJSON(t, got), bodyJSON(t, want); g != w {
		t.Fatalf("Decode() body=%s, want %s", g, w)
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	samples := sampleEvents()
	escaped := samples[2]
	escaped.ID = "id-é%"
	escaped.Lease = "lease ü\n"
	tests := []struct {
		name        string
		ev          Event
		wantSubject string
		wantHeaders map[string]string // raw header values on the NATS message
	}{
		{
			name: "created", ev: samples[0],
			wantSubject: "a2a.evt.default.0197a0c4-7f0e-7d2a-9a51-3c1b0a9e7f21.in",
			wantHeaders: map[string]string{"ce-type": string(TypeCreated), "ce-specversion": "1.0", "ce-source": source, "content-type": "application/json", "ce-id": "created-0197a0c4-7f0e-7d2a-9a51-3c1b0a9e7f21"},
		},
		{
			name: "input", ev: samples[1],
			wantSubject: "a2a.evt.acme.0197a0c4-7f0e-7d2a-9a51-3c1b0a9e7f21.in",
			wantHeaders: map[string]string{"ce-type": string(TypeInput), "ce-id": "input-1"},
		},
		{
			name: "status with lease", ev: samples[2],
			wantSubject: "a2a.evt.default.0197a0c4-7f0e-7d2a-9a51-3c1b0a9e7f21.st",
			wantHeaders: map[string]string{"ce-type": string(TypeStatus), LeaseHeader: "lease-7"},
		},
		{
			name: "artifact", ev: samples[3],
			wantSubject: "a2a.evt.default.0197a0c4-7f0e-7d2a-9a51-3c1b0a9e7f21.art",
			wantHeaders: map[string]string{"ce-type": string(TypeArtifact), "ce-time": "2025-06-01T12:30:45.123456789Z"},
		},
		{
			name: "percent-encoded id and lease", ev: escaped,
			wantSubject: "a2a.evt.default.0197a0c4-7f0e-7d2a-9a51-3c1b0a9e7f21.st",
			wantHeaders: map[string]string{"ce-id": "id-%C3%A9%25", LeaseHeader: "lease %C3%BC%0A"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Encode(tt.ev)
			if err != nil {
				t.Fatalf("Encode()=%v", err)
			}
			if m.Subject != tt.wantSubject {
				t.Errorf("Encode().Subject=%q, want %q", m.Subject, tt.wantSubject)
			}
			for k, want := range tt.wantHeaders {
				if got := m.Header.Get(k); got != want {
					t.Errorf("Encode() header %s=%q, want %q", k, got, want)
				}
			}
			if tt.ev.Lease == "" {
				if got, ok := m.Header[LeaseHeader]; ok {
					t.Errorf("Encode() header %s=%q, want none", LeaseHeader, got)
				}
			}
			got, err := Decode(m.Subject, m.Header, m.Data, 42)
			if err != nil {
				t.Fatalf("Decode()=%v", err)
			}
			if got.Seq != 42 {
				t.Errorf("Decode().Seq=%d, want 42", got.Seq)
			}
			checkSameEvent(t, got, tt.ev)
		})
	}
}

func TestDecodeMalformed(t *testing.T) {
	samples := sampleEvents()
	encode := func(ev Event) *nats.Msg {
		m, err := Encode(ev)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	created, status, artifact := encode(samples[0]), encode(samples[2]), encode(samples[3])
	otherTask := samples[0]
	otherTask.TaskID = "other"
	mismatched := encode(otherTask)
	badEscape := encode(samples[2])
	badEscape.Header.Set("ce-id", "id-%zz")
	tests := []struct {
		name    string
		subject string
		hdr     nats.Header
		data    []byte
	}{
		{"not an event subject", "a2a.idem.default.x", created.Header, created.Data},
		{"too few subject tokens", "a2a.evt.default.in", created.Header, created.Data},
		{"too many subject tokens", "a2a.evt.default.t.x.in", created.Header, created.Data},
		{"type on the wrong kind", status.Subject, created.Header, created.Data},
		{"created task not the subject's", mismatched.Subject, created.Header, created.Data},
		{"created without task", created.Subject, created.Header, []byte(`{"dialect":"1.0"}`)},
		{"created body not JSON", created.Subject, created.Header, []byte(`{"task":`)},
		{"input without message", "a2a.evt.default.t.in", encode(samples[1]).Header, []byte(`{}`)},
		{"artifact without artifact", artifact.Subject, artifact.Header, []byte(`{"taskId":"t"}`)},
		{"status body of the wrong shape", status.Subject, status.Header, []byte(`{"status":7}`)},
		{"bad percent escape", badEscape.Subject, badEscape.Header, badEscape.Data},
		{"unknown type on an empty kind", "a2a.evt.default.t.", nats.Header{"ce-id": {"x"}, "ce-type": {"a2a.task.bogus.v1"}, "ce-specversion": {"1.0"}, "ce-source": {source}}, []byte(`{}`)},
		{"no id", status.Subject, nats.Header{"ce-type": {string(TypeStatus)}, "ce-specversion": {"1.0"}, "ce-source": {source}}, status.Data},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := Decode(tt.subject, tt.hdr, tt.data, 1)
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("Decode()=(%+v, %v), want an error wrapping ErrMalformed", ev, err)
			}
		})
	}
}

// Bits of FuzzDecode's mode argument: how the envelope headers are
// written besides the fuzzed values.
const (
	modeCanonicalNames = 1 << iota // Ce-Id rather than ce-id
	modeNoSource                   // no ce-source
	modeNoSpecVersion              // no ce-specversion
	modeSpecVersion03              // ce-specversion 0.3
)

// FuzzDecode feeds Decode mutated subjects, attribute headers and bodies.
// Decode must not panic, and must either refuse the message with an error
// wrapping ErrMalformed or return an event that survives Encode and Decode
// unchanged.
func FuzzDecode(f *testing.F) {
	for i, ev := range sampleEvents() {
		m, err := Encode(ev)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(m.Subject, m.Header.Get("ce-id"), m.Header.Get("ce-type"), m.Header.Get("ce-time"), m.Header.Get("content-type"), m.Header.Get(LeaseHeader), uint8(i), m.Data)
	}
	f.Add("a2a.evt.default.t.st", "%zz", "a2a.task.status.v1", "yesterday", "text/plain", "", uint8(0), []byte(`{"status":{"state":"TASK_STATE_WORKING"}}`))
	f.Add("a2a.evt.default.t.in", "id-%C3%A9%25", "a2a.task.input.v1", "", "", "l", uint8(modeCanonicalNames), []byte(`{"message":null}`))
	f.Add("a2a.evt.default.t.st", "x", "a2a.task.status.v1", "", "application/json; charset=utf-8", "", uint8(modeSpecVersion03), []byte(`{}`))
	// Found by an earlier fuzz run: no id, an empty subject kind and an
	// empty type were accepted.
	f.Add("a2a.evt...", "", "", "", "", "", uint8(0), []byte(nil))
	f.Add("a2a.evt.default.t.", "x", "a2a.task.bogus.v1", "", "", "", uint8(0), []byte(`{}`))
	// A valid RFC 3339 time whose UTC form is in year 10000.
	f.Add("a2a.evt.default.t.st", "x", "a2a.task.status.v1", "9999-12-31T23:59:59-23:59", "application/json", "", uint8(0), []byte(`{}`))
	f.Fuzz(func(t *testing.T, subject, id, typ, tm, contentType, lease string, mode uint8, body []byte) {
		values := map[string]string{"ce-specversion": "1.0", "ce-source": source, "ce-id": id, "ce-type": typ, "ce-time": tm, "content-type": contentType, LeaseHeader: lease}
		if mode&modeNoSource != 0 {
			delete(values, "ce-source")
		}
		if mode&modeNoSpecVersion != 0 {
			delete(values, "ce-specversion")
		}
		if mode&modeSpecVersion03 != 0 {
			values["ce-specversion"] = "0.3"
		}
		hdr := nats.Header{}
		for k, v := range values {
			if v == "" {
				continue
			}
			if mode&modeCanonicalNames != 0 {
				k = textproto.CanonicalMIMEHeaderKey(k)
			}
			hdr[k] = []string{v}
		}
		ev, err := Decode(subject, hdr, body, 7)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("Decode()=%v, want an error wrapping ErrMalformed", err)
			}
			return
		}
		if ev.Seq != 7 {
			t.Fatalf("Decode().Seq=%d, want 7", ev.Seq)
		}
		m, err := Encode(ev)
		if err != nil {
			t.Fatalf("Decode() accepted an event Encode refuses: %v (event %+v)", err, ev)
		}
		again, err := Decode(m.Subject, m.Header, m.Data, 7)
		if err != nil {
			t.Fatalf("Decode(Encode(ev))=%v, ev %+v", err, ev)
		}
		checkSameEvent(t, again, ev)
		if !bytes.Equal(m.Data, mustEncode(t, again).Data) {
			t.Fatalf("Encode is not stable over Decode: %s vs %s", m.Data, mustEncode(t, again).Data)
		}
	})
}

func mustEncode(t *testing.T, ev Event) *nats.Msg {
	t.Helper()
	m, err := Encode(ev)
	if err != nil {
		t.Fatalf("Encode()=%v", err)
	}
	return m
}
