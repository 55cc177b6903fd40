package proctest

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

func TestBufferAwait(t *testing.T) {
	hasLine := func(s string) bool { return strings.HasSuffix(s, "\n") }
	t.Run("written later, in pieces", func(t *testing.T) {
		var b Buffer
		go func() {
			b.Write([]byte("http://127"))
			b.Write([]byte(".0.0.1:1\n"))
		}()
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		if got, ok := b.Await(ctx, hasLine); !ok || got != "http://127.0.0.1:1\n" {
			t.Errorf("Await = %q, %v", got, ok)
		}
	})
	t.Run("already there", func(t *testing.T) {
		var b Buffer
		b.Write([]byte("done\n"))
		if got, ok := b.Await(t.Context(), hasLine); !ok || got != "done\n" {
			t.Errorf("Await = %q, %v", got, ok)
		}
	})
	t.Run("never", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var b Buffer
			b.Write([]byte("partial"))
			ctx, cancel := context.WithTimeout(t.Context(), time.Second)
			defer cancel()
			if got, ok := b.Await(ctx, hasLine); ok || got != "partial" {
				t.Errorf("Await = %q, %v; want the partial text, false", got, ok)
			}
		})
	})
}
