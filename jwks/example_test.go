package jwks_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/a2abus/a2abus/jwks"
)

// A webhook receiver checks each push against the agent's JWKS before
// trusting it. Here an in-process JWKS server and signer stand in for the
// a2abus edge.
func ExampleVerifier() {
	ctx := context.Background()
	ring, _ := jwks.Ring{}.Rotate(jwks.ES256, time.Now().Add(-time.Minute), 0, time.Minute)
	signer := jwks.NewSigner("https://agent.example/", time.Minute)
	signer.SetRing(ring)
	edge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		doc, _ := signer.Ring().JWKS(time.Now())
		w.Write(doc)
	}))
	defer edge.Close()

	// The receiver: one Verifier for the agent's JWKS URL and the webhook
	// URL it registered.
	const webhookURL = "https://receiver.example/a2a/push"
	verifier, err := jwks.NewVerifier(ctx, edge.URL+"/.well-known/jwks.json", jwks.VerifierOptions{Audience: webhookURL})
	if err != nil {
		fmt.Println("verifier:", err)
		return
	}
	defer verifier.Close(ctx)
	receive := func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		claims, err := verifier.Verify(r.Context(), r, body)
		switch {
		case errors.Is(err, jwks.ErrReplayed):
			w.WriteHeader(http.StatusOK) // already processed: a retry
			fmt.Println("duplicate ignored")
		case err != nil:
			http.Error(w, "bad push", http.StatusUnauthorized)
			fmt.Println("rejected:", errors.Is(err, jwks.ErrBodyMismatch))
		default:
			fmt.Printf("task %s event %d: %s\n", claims.TaskID, claims.Seq, body)
		}
	}

	// What a2abus sends.
	body := []byte(`{"statusUpdate":{"taskId":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_WORKING"}}}`)
	token, _, _ := signer.Sign(time.Now(), jwks.Token{Audience: webhookURL, ID: "default.t-1.cfg.42", TaskID: "t-1", Seq: 42, Body: body})
	push := func(b []byte) {
		r := httptest.NewRequest(http.MethodPost, webhookURL, bytes.NewReader(b))
		r.Header.Set("Authorization", "Bearer "+token)
		receive(httptest.NewRecorder(), r)
	}
	push(body)
	push(body)                                                 // the same delivery again
	push(bytes.Replace(body, []byte("t-1"), []byte("t-2"), 1)) // tampered
	// Output:
	// task t-1 event 42: {"statusUpdate":{"taskId":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_WORKING"}}}
	// duplicate ignored
	// rejected: true
}
