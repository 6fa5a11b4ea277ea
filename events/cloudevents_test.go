package events

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/cloudevents/sdk-go/v2/binding"
	"github.com/cloudevents/sdk-go/v2/binding/spec"
	ce "github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"
	"github.com/nats-io/nats.go"
)

// The CloudEvents SDK is the oracle for the envelope: every message Encode
// writes must read back through the SDK's binary-mode reader with the same
// attributes, and every message the SDK writes must Decode.

// v1 is the CloudEvents 1.0 attribute set.
var v1 = spec.VS.Version(ce.CloudEventsVersionV1)

func headerName(a spec.Attribute) string {
	if a.Kind() == spec.DataContentType {
		return contentTypeHeader
	}
	return headerPrefix + a.Name()
}

func attributeOf(header string) spec.Attribute {
	if header == contentTypeHeader {
		return v1.AttributeFromKind(spec.DataContentType)
	}
	name, ok := strings.CutPrefix(header, headerPrefix)
	if !ok {
		return nil
	}
	return v1.Attribute(name)
}

func conformanceEvents() []Event {
	at := time.Date(2026, 11, 22, 5, 6, 7, 891000000, time.UTC)
	msg := &a2a.Message{ID: "m", Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart("hi")}}
	return []Event{
		{ID: "c-1", Type: TypeCreated, Tenant: "default", TaskID: "t1", Time: at,
			Body: &Created{Task: &a2a.Task{ID: "t1", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: &at}, History: []*a2a.Message{msg}}, Dialect: "1.0"}},
		{ID: "i-é%1", Type: TypeInput, Tenant: "acme", TaskID: "t1", Time: at, Body: &Input{Message: msg}},
		{ID: "s-1", Type: TypeStatus, Tenant: "default", TaskID: "t1", Time: at, Lease: "lease-1",
			Body: &a2a.TaskStatusUpdateEvent{TaskID: "t1", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: &at}}},
		{ID: "a-1", Type: TypeArtifact, Tenant: "default", TaskID: "t1", Time: at, Lease: "lease-1",
			Body: &a2a.TaskArtifactUpdateEvent{TaskID: "t1", ContextID: "c", Append: true, Artifact: &a2a.Artifact{ID: "x", Parts: a2a.ContentParts{a2a.NewTextPart("chunk")}}}},
	}
}

func TestEncodeReadsBackThroughCloudEventsSDK(t *testing.T) {
	for _, ev := range conformanceEvents() {
		t.Run(string(ev.Type), func(t *testing.T) {
			m, err := Encode(ev)
			if err != nil {
				t.Fatal(err)
			}
			got, err := binding.ToEvent(context.Background(), &headerMessage{hdr: m.Header, data: m.Data})
			if err != nil {
				t.Fatalf("SDK ToEvent: %v", err)
			}
			if err := got.Validate(); err != nil {
				t.Fatalf("SDK Validate: %v", err)
			}
			if got.ID() != ev.ID || got.Type() != string(ev.Type) || got.Source() != source ||
				got.Subject() != ev.Tenant+"/"+string(ev.TaskID) || !got.Time().Equal(ev.Time) ||
				got.DataContentType() != contentJSON || !bytes.Equal(got.Data(), m.Data) {
				t.Errorf("SDK read %v, want the attributes of %+v", got, ev)
			}
			if lease, _ := types.ToString(got.Extensions()["a2alease"]); lease != ev.Lease {
				t.Errorf("SDK a2alease = %q, want %q", lease, ev.Lease)
			}
		})
	}
}

func TestDecodeReadsCloudEventsSDKMessages(t *testing.T) {
	for _, want := range conformanceEvents() {
		t.Run(string(want.Type), func(t *testing.T) {
			data, err := json.Marshal(want.Body)
			if err != nil {
				t.Fatal(err)
			}
			e := ce.New(ce.CloudEventsVersionV1)
			e.SetID(want.ID)
			e.SetType(string(want.Type))
			e.SetSource(source)
			e.SetSubject(want.Tenant + "/" + string(want.TaskID))
			e.SetTime(want.Time)
			if want.Lease != "" {
				e.SetExtension("a2alease", want.Lease)
			}
			if err := e.SetData(ce.ApplicationJSON, json.RawMessage(data)); err != nil {
				t.Fatal(err)
			}
			m := &nats.Msg{Subject: Subject(want.Tenant, want.TaskID, want.Type.Kind()), Header: nats.Header{}}
			if _, err := binding.Write(context.Background(), binding.ToMessage(&e), nil, (*headerWriter)(m)); err != nil {
				t.Fatal(err)
			}
			got, err := Decode(m.Subject, m.Header, m.Data, 7)
			if err != nil {
				t.Fatalf("Decode(SDK message): %v", err)
			}
			gb, _ := json.Marshal(got.Body)
			if got.ID != want.ID || got.Type != want.Type || got.Lease != want.Lease || !got.Time.Equal(want.Time) ||
				got.Seq != 7 || !bytes.Equal(gb, data) {
				t.Errorf("Decode() = %+v, want %+v", got, want)
			}
		})
	}
}

func TestDecodeRejectsBadEnvelopes(t *testing.T) {
	good, err := Encode(conformanceEvents()[2])
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		header string
		value  string // "" deletes the header
	}{
		{"no specversion", specVersionHeader, ""},
		{"specversion 0.3", specVersionHeader, "0.3"},
		{"no id", idHeader, ""},
		{"no source", sourceHeader, ""},
		{"no type", typeHeader, ""},
		{"unknown type", typeHeader, "a2a.task.other.v1"},
		{"type of another kind", typeHeader, string(TypeArtifact)},
		{"bad time", timeHeader, "yesterday"},
		{"xml body", contentTypeHeader, "application/xml"},
		{"bad escape", idHeader, "%zz"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := nats.Header{}
			for k, v := range good.Header {
				h[k] = v
			}
			if tt.value == "" {
				delete(h, tt.header)
			} else {
				h[tt.header] = []string{tt.value}
			}
			if _, err := Decode(good.Subject, h, good.Data, 1); err == nil {
				t.Errorf("Decode() accepted %s", tt.name)
			}
		})
	}
}

// headerWriter is the SDK binary-mode writer onto NATS headers.
type headerWriter nats.Msg

var _ binding.BinaryWriter = (*headerWriter)(nil)

func (w *headerWriter) Start(context.Context) error { return nil }
func (w *headerWriter) End(context.Context) error   { return nil }

func (w *headerWriter) SetAttribute(a spec.Attribute, value any) error {
	if value == nil {
		delete(w.Header, headerName(a))
		return nil
	}
	s, err := types.Format(value)
	if err != nil {
		return err
	}
	w.Header[headerName(a)] = []string{escape(s)}
	return nil
}

func (w *headerWriter) SetExtension(name string, value any) error {
	key := headerPrefix + strings.ToLower(name)
	if value == nil {
		delete(w.Header, key)
		return nil
	}
	s, err := types.Format(value)
	if err != nil {
		return err
	}
	w.Header[key] = []string{escape(s)}
	return nil
}

func (w *headerWriter) SetData(r io.Reader) error {
	b, err := io.ReadAll(r)
	w.Data = b
	return err
}

// headerMessage reads a binary-mode CloudEvent from NATS headers.
type headerMessage struct {
	hdr  nats.Header
	data []byte
}

var (
	_ binding.Message               = (*headerMessage)(nil)
	_ binding.MessageMetadataReader = (*headerMessage)(nil)
)

func (m *headerMessage) ReadEncoding() binding.Encoding { return binding.EncodingBinary }

func (m *headerMessage) ReadStructured(context.Context, binding.StructuredWriter) error {
	return binding.ErrNotStructured
}

func (m *headerMessage) ReadBinary(_ context.Context, w binding.BinaryWriter) error {
	for k, v := range m.hdr {
		if len(v) == 0 {
			continue
		}
		lk := strings.ToLower(k)
		val, err := unescape(v[0])
		if err != nil {
			return fmt.Errorf("header %s: %w", k, err)
		}
		if a := attributeOf(lk); a != nil {
			if err := w.SetAttribute(a, val); err != nil {
				return err
			}
		} else if name, ok := strings.CutPrefix(lk, headerPrefix); ok {
			if err := w.SetExtension(name, val); err != nil {
				return err
			}
		}
	}
	if len(m.data) > 0 {
		return w.SetData(bytes.NewReader(m.data))
	}
	return nil
}

func (m *headerMessage) GetAttribute(k spec.Kind) (spec.Attribute, any) {
	a := v1.AttributeFromKind(k)
	if a == nil {
		return nil, nil
	}
	v := m.hdr.Get(headerName(a))
	if v == "" {
		return a, nil
	}
	s, err := unescape(v)
	if err != nil {
		return a, nil
	}
	return a, s
}

func (m *headerMessage) GetExtension(name string) any {
	v := m.hdr.Get(headerPrefix + strings.ToLower(name))
	if v == "" {
		return nil
	}
	s, err := unescape(v)
	if err != nil {
		return nil
	}
	return s
}

func (m *headerMessage) Finish(error) error { return nil }
