package tool

import (
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/golden"
)

// TestSpecs pins what the model is told about every tool.
func TestSpecs(t *testing.T) {
	var b strings.Builder
	for _, tl := range Builtins(Env{CWD: "/work"}) {
		s := tl.Spec()
		params := s.Parameters.Clone()
		if err := params.Indent(jsontext.WithIndent("  ")); err != nil {
			t.Fatalf("%s: parameters are not JSON: %v", s.Name, err)
		}
		b.WriteString("## " + s.Name + "\n\ndescription: " + s.Description + "\nsnippet: " + s.Snippet + "\n")
		for _, g := range s.Guidelines {
			b.WriteString("guideline: " + g + "\n")
		}
		b.WriteString("parameters:\n" + string(params) + "\n\n")
		if got := s.LLM(); got.Name != s.Name || string(got.Parameters) != string(s.Parameters) {
			t.Errorf("%s: LLM() = %+v", s.Name, got)
		}
	}
	golden.Check(t, "specs.golden", b.String())
}

// TestSchemaShapes checks the parameter names and types against pi's
// (models are trained on them), independently of the descriptions.
func TestSchemaShapes(t *testing.T) {
	want := map[string]string{
		"read":  "object{path:string!,offset:number,limit:number}",
		"bash":  "object{command:string!,timeout:number}",
		"edit":  "object{path:string!,edits:array[object{oldText:string!,newText:string!}]!}",
		"write": "object{path:string!,content:string!}",
		"grep":  "object{pattern:string!,path:string,glob:string,ignoreCase:boolean,literal:boolean,context:number,limit:number}",
		"find":  "object{pattern:string!,path:string,limit:number}",
		"ls":    "object{path:string,limit:number}",
	}
	var names []string
	for _, tl := range Builtins(Env{CWD: "/work"}) {
		s := tl.Spec()
		names = append(names, s.Name)
		sch, err := parseSchema(s.Parameters)
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		if got := shape(sch); got != want[s.Name] {
			t.Errorf("%s: schema shape\n got %s\nwant %s", s.Name, got, want[s.Name])
		}
	}
	if got := strings.Join(names, ","); got != "read,bash,edit,write,grep,find,ls" {
		t.Errorf("Builtins order = %s", got)
	}
}

func shape(s *schema) string {
	t := strings.Join(s.types, "|")
	switch t {
	case "object":
		var parts []string
		for _, p := range s.properties {
			part := p.name + ":" + shape(p.sch)
			if s.required[p.name] {
				part += "!"
			}
			parts = append(parts, part)
		}
		return "object{" + strings.Join(parts, ",") + "}"
	case "array":
		return "array[" + shape(s.items) + "]"
	}
	return t
}
