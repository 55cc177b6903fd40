package tui

import "testing"

// TestImagePaste: a dropped image file's path, however the terminal
// writes it, becomes an @path reference; other pastes are left alone.
func TestImagePaste(t *testing.T) {
	for in, want := range map[string]string{
		"/home/u/shot.png":                 "@/home/u/shot.png ",
		"'/home/u/my shot.PNG'":            `@"/home/u/my shot.PNG" `,
		`/home/u/my\ shot.jpg`:             `@"/home/u/my shot.jpg" `,
		"file:///tmp/Screen%20Shot.webp\n": `@"/tmp/Screen Shot.webp" `,
		"~/Pictures/a.gif":                 "@~/Pictures/a.gif ",
		"./diagram.jpeg":                   "@./diagram.jpeg ",
		"see /home/u/shot.png":             "see /home/u/shot.png",
		"shot.png":                         "shot.png",
		"/home/u/notes.txt":                "/home/u/notes.txt",
		"/a/one.png\n/a/two.png":           "/a/one.png\n/a/two.png",
		"func main() {}":                   "func main() {}",
	} {
		if got := imagePaste(in); got != want {
			t.Errorf("imagePaste(%q) = %q, want %q", in, got, want)
		}
	}
}
