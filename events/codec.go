package events

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/cloudevents/sdk-go/v2/binding"
	"github.com/cloudevents/sdk-go/v2/binding/spec"
	ce "github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"
	"github.com/nats-io/nats.go"
)

// headerPrefix prefixes CloudEvents attribute headers on NATS messages.
const headerPrefix = "ce-"

// contentTypeHeader carries datacontenttype, as in the HTTP binding.
const contentTypeHeader = "content-type"

// leaseExtension is the CloudEvents extension that carries [Event.Lease].
const leaseExtension = "a2alease"

// LeaseHeader is the NATS header holding [Event.Lease], for readers that
// look at headers without decoding the event.
const LeaseHeader = headerPrefix + leaseExtension

// source is the CloudEvents source of every event.
const source = "/a2abus"

// ErrMalformed is returned by [Decode] for a message that is not a valid
// task event.
var ErrMalformed = errors.New("malformed event")

// v1 is the CloudEvents 1.0 attribute set.
var v1 = spec.VS.Version(ce.CloudEventsVersionV1)

// headerName returns the NATS header carrying attribute a.
func headerName(a spec.Attribute) string {
	if a.Kind() == spec.DataContentType {
		return contentTypeHeader
	}
	return headerPrefix + a.Name()
}

// attributeOf returns the attribute a (lowercase) header carries, if any.
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

// Encode returns the NATS message of ev: its subject, CloudEvents headers and
// JSON body. ev.Seq is ignored. It fails if ev has no id, an unknown type, or
// a body of the wrong kind.
func Encode(ev Event) (*nats.Msg, error) {
	if err := checkBody(ev); err != nil {
		return nil, err
	}
	data, err := json.Marshal(ev.Body)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", ev.Type, err)
	}
	e := ce.New(ce.CloudEventsVersionV1)
	e.SetID(ev.ID)
	e.SetType(string(ev.Type))
	e.SetSource(source)
	e.SetSubject(ev.Tenant + "/" + string(ev.TaskID))
	e.SetTime(ev.Time)
	if ev.Lease != "" {
		e.SetExtension(leaseExtension, ev.Lease)
	}
	if err := e.SetData(ce.ApplicationJSON, json.RawMessage(data)); err != nil {
		return nil, fmt.Errorf("encode %s: %w", ev.Type, err)
	}
	m := &nats.Msg{Subject: Subject(ev.Tenant, ev.TaskID, ev.Type.Kind()), Header: nats.Header{}}
	w := (*headerWriter)(m)
	if _, err := binding.Write(context.Background(), binding.ToMessage(&e), nil, w); err != nil {
		return nil, fmt.Errorf("encode %s: %w", ev.Type, err)
	}
	return m, nil
}

func checkBody(ev Event) error {
	if ev.ID == "" {
		return fmt.Errorf("encode: event has no id")
	}
	ok := false
	switch ev.Type {
	case TypeCreated:
		_, ok = ev.Body.(*Created)
	case TypeInput:
		_, ok = ev.Body.(*Input)
	case TypeStatus:
		_, ok = ev.Body.(*a2a.TaskStatusUpdateEvent)
	case TypeArtifact:
		_, ok = ev.Body.(*a2a.TaskArtifactUpdateEvent)
	default:
		return fmt.Errorf("encode: unknown event type %q", ev.Type)
	}
	if !ok {
		return fmt.Errorf("encode %s: body is %T", ev.Type, ev.Body)
	}
	return nil
}

// Decode reads the event stored at seq on subject with header hdr and body
// data. It returns an error wrapping [ErrMalformed] if the subject, the
// envelope or the body is not a valid task event.
func Decode(subject string, hdr nats.Header, data []byte, seq uint64) (Event, error) {
	tenant, task, kind, err := ParseSubject(subject)
	if err != nil {
		return Event{}, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	e, err := binding.ToEvent(context.Background(), &headerMessage{hdr: hdr, data: data})
	if err != nil {
		return Event{}, fmt.Errorf("%w: envelope: %v", ErrMalformed, err)
	}
	ev := Event{
		ID:     e.ID(),
		Type:   Type(e.Type()),
		Tenant: tenant,
		TaskID: task,
		Time:   e.Time(),
		Seq:    seq,
	}
	if v, ok := e.Extensions()[leaseExtension]; ok {
		ev.Lease, _ = types.ToString(v)
	}
	if ev.Type.Kind() != kind {
		return Event{}, fmt.Errorf("%w: type %q on subject kind %q", ErrMalformed, ev.Type, kind)
	}
	switch ev.Type {
	case TypeCreated:
		var b Created
		err = json.Unmarshal(e.Data(), &b)
		if err == nil && (b.Task == nil || b.Task.ID != task) {
			err = errors.New("created task does not match subject")
		}
		ev.Body = &b
	case TypeInput:
		var b Input
		err = json.Unmarshal(e.Data(), &b)
		if err == nil && b.Message == nil {
			err = errors.New("input without message")
		}
		ev.Body = &b
	case TypeStatus:
		var b a2a.TaskStatusUpdateEvent
		err = json.Unmarshal(e.Data(), &b)
		ev.Body = &b
	case TypeArtifact:
		var b a2a.TaskArtifactUpdateEvent
		err = json.Unmarshal(e.Data(), &b)
		if err == nil && b.Artifact == nil {
			err = errors.New("artifact event without artifact")
		}
		ev.Body = &b
	}
	if err != nil {
		return Event{}, fmt.Errorf("%w: %s body: %v", ErrMalformed, ev.Type, err)
	}
	return ev, nil
}

// headerWriter writes a binary-mode CloudEvent into a NATS message.
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

// escape percent-encodes a header value: '%', controls, and non-ASCII bytes,
// as the CloudEvents NATS binding asks for values that are not plain text.
func escape(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '%' || c < 0x20 || c >= 0x7f {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' || c < 0x20 || c >= 0x7f {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func unescape(s string) (string, error) {
	if !strings.Contains(s, "%") {
		return s, nil
	}
	return url.PathUnescape(s)
}
