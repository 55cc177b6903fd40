package mcp

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestHeadersStayWithTheirServer: an MCP entry's headers (a token, as a
// rule) go to its server only. A server that redirects the client to
// another one used to have the token sent there too, since the headers
// were added to every request the transport made.
func TestHeadersStayWithTheirServer(t *testing.T) {
	var mu sync.Mutex
	got := map[string]string{}
	record := func(name string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			got[name] = r.Header.Get("Authorization")
			mu.Unlock()
		}
	}
	other := httptest.NewServer(record("other"))
	defer other.Close()
	elsewhere := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
	own := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		record("own")(w, r)
		http.Redirect(w, r, elsewhere+"/mcp", http.StatusTemporaryRedirect)
	}))
	defer own.Close()
	c := &http.Client{Transport: headerTransport{base: http.DefaultTransport, headers: map[string]string{"Authorization": "Bearer secret"},
		origin: origin(own.URL + "/mcp")}}
	resp, err := c.Post(own.URL+"/mcp", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	mu.Lock()
	defer mu.Unlock()
	if got["own"] != "Bearer secret" {
		t.Errorf("the entry's server got Authorization %q", got["own"])
	}
	if v, ok := got["other"]; !ok || v != "" {
		t.Errorf("the server redirected to: reached %v, Authorization %q (want reached, without the token)", ok, v)
	}
}
