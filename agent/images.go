package agent

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/prime-agent/prime/llm"
)

// ErrNoImageInput means a prompt carries images and the model takes text
// only. The prompt is refused before anything is written or sent.
var ErrNoImageInput = errors.New("this model does not accept images")

// maxImageBytes bounds an image read from an @path reference.
const maxImageBytes = 20 << 20

// imageRef matches an @path reference to an image file in a prompt: "@"
// at the start or after white space, then a path ending in an image
// extension, bare or in double or single quotes (for paths with spaces).
var imageRef = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(?:^|\s)@(?:"([^"]+\.(?:png|jpe?g|gif|webp))"|'([^']+\.(?:png|jpe?g|gif|webp))'|(\S+\.(?:png|jpe?g|gif|webp)))`)
})

// ImageType returns the MIME type of an image the models take (PNG, JPEG,
// GIF, WebP), judged by its content, or "".
func ImageType(data []byte) string {
	switch t := http.DetectContentType(data); t {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return t
	}
	return ""
}

// imageRefs reads the images a prompt names with @path (relative paths
// from the conversation's directory), in order. The text is sent as it
// is, the references included. A reference to a file that does not
// exist is left as text; one to a file that is not an image, or too big
// to send, is an error naming it.
func (a *Agent) imageRefs(text string) ([]llm.Image, error) {
	var images []llm.Image
	for _, m := range imageRef().FindAllStringSubmatch(text, -1) {
		name := m[1] + m[2] + m[3]
		p := name
		if strings.HasPrefix(p, "~/") {
			if home, err := os.UserHomeDir(); err == nil {
				p = filepath.Join(home, p[2:])
			}
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(a.cwd(), p)
		}
		st, err := os.Stat(p)
		if err != nil || st.IsDir() {
			continue
		}
		if st.Size() > maxImageBytes {
			return nil, fmt.Errorf("@%s: %d MB is too big to send (at most %d MB)", name, st.Size()>>20, maxImageBytes>>20)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("@%s: %w", name, err)
		}
		mime := ImageType(data)
		if mime == "" {
			return nil, fmt.Errorf("@%s: not a PNG, JPEG, GIF or WebP image", name)
		}
		images = append(images, llm.Image{Data: base64.StdEncoding.EncodeToString(data), MIMEType: mime})
	}
	return images, nil
}

// checkImages refuses images for a model that takes text only.
func (a *Agent) checkImages(images []llm.Image) error {
	if len(images) == 0 {
		return nil
	}
	a.mu.Lock()
	m := a.conv.model
	a.mu.Unlock()
	if m != nil && !m.AcceptsImages() {
		return fmt.Errorf("%w: %s takes text only; choose a model that takes images (/model) or send the prompt without them", ErrNoImageInput, m)
	}
	return nil
}
