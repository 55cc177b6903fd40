package settings

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/jsonedit"
)

// kind is the type of a known key's value.
type kind uint8

const (
	kindBool    kind = iota // true or false
	kindTokens              // a whole number of tokens, 0 or more
	kindCount               // a whole number, 0 or more
	kindMillis              // a whole number of milliseconds, 0 or more
	kindModel               // "provider/id"
	kindString              // any text that is not blank
	kindEnum                // one of the key's values
	kindPercent             // a whole number from 1 to 100
)

// want says what a kind accepts, for messages.
func (k kind) want() string {
	switch k {
	case kindBool:
		return "true or false"
	case kindTokens:
		return "a whole number of tokens, 0 or more"
	case kindCount:
		return "a whole number, 0 or more"
	case kindMillis:
		return "a whole number of milliseconds, 0 or more"
	case kindPercent:
		return "a whole number from 1 to 100 (a percentage)"
	case kindString:
		return "a string"
	default:
		return `a model as "provider/id"`
	}
}

// keyDef is one setting Prime knows.
type keyDef struct {
	name string // "compaction.enabled"
	kind kind
	// def is the default: a bool, an int, or nil for "not set".
	def any
	// summary says what the key does, for help.
	summary string
	// values are what a kindEnum key accepts.
	values []string
	// project says whether a project the user has not trusted may set the
	// key. Every key must choose (the table's rows are positional).
	project projectRule
}

// projectRule says whether the settings file of a project the user has not
// trusted (with prime trust) may set a key. A cloned repository is someone
// else's text: it may tune how Prime behaves, but not choose a program to
// run, a server to send the conversation to, or anything else that acts
// beyond Prime with the user's rights.
type projectRule uint8

const (
	// anyProject: the key only tunes Prime (limits, modes, display, a
	// choice among the models the user configured), so any project may
	// set it.
	anyProject projectRule = iota + 1
	// trustedProject: the key can run code or send data elsewhere (a
	// shell, a command, a URL); an untrusted project's value is ignored
	// with a warning naming the key and the file.
	trustedProject
	// tighterProject: an untrusted project may set the key only to a
	// stricter value than the user's (a kindEnum key whose values go from
	// the loosest to the strictest); a looser value is ignored with a
	// warning, as trustedProject's are.
	tighterProject
)

// section and field split a known key's name: "compaction.enabled" is field
// enabled of section compaction; a top-level key such as "defaultModel" has
// no section.
func (d *keyDef) section() string {
	if s, _, ok := strings.Cut(d.name, "."); ok {
		return s
	}
	return ""
}

func (d *keyDef) field() string {
	if _, f, ok := strings.Cut(d.name, "."); ok {
		return f
	}
	return d.name
}

// want says what the key accepts, for messages.
func (d *keyDef) want() string {
	if d.kind == kindEnum {
		return "one of " + strings.Join(d.values, ", ")
	}
	return d.kind.want()
}

// Names of the keys the getters read.
const (
	keyCompactionEnabled    = "compaction.enabled"
	keyCompactionReserve    = "compaction.reserveTokens"
	keyCompactionKeepRecent = "compaction.keepRecentTokens"
	keyCompactionModel      = "compaction.model"
	keyBackground           = "compaction.background"
	keyBackgroundThreshold  = "compaction.backgroundThreshold"
	keyBranchReserve        = "branchSummary.reserveTokens"
	keyBranchSkipPrompt     = "branchSummary.skipPrompt"
	keyRetryEnabled         = "retry.enabled"
	keyRetryMaxRetries      = "retry.maxRetries"
	keyRetryBaseDelay       = "retry.baseDelayMs"
	keyRetryMaxDelay        = "retry.maxDelayMs"
	keyStreamIdle           = "retry.streamIdleTimeoutMs"
	keyStreamKeepAlive      = "retry.streamKeepAliveTimeoutMs"
	keyDefaultProvider      = "defaultProvider"
	keyDefaultModel         = "defaultModel"
	keyDefaultThinking      = "defaultThinkingLevel"
	keySteeringMode         = "steeringMode"
	keyFollowUpMode         = "followUpMode"
	keyShellPath            = "shellPath"
	keyHideThinking         = "hideThinkingBlock"
	keyDoubleEscape         = "doubleEscapeAction"
	keyMaxTurns             = "maxTurns"
	keyBashTimeout          = "bashTimeoutSec"
	keyEnvExclude           = "shellEnvironment.exclude"
	keyEnvInclude           = "shellEnvironment.include"
	keyEnvInherit           = "shellEnvironment.inheritSecrets"
	keyPermMode             = "permissions.mode"
	keyPermNetwork          = "permissions.network"
	keyPermDenyRead         = "permissions.denyRead"
	keyPermAllowWrite       = "permissions.allowWrite"
)

// Keys that are not plain values.
const (
	modelOverridesField     = "modelOverrides"
	modelOverridesKeyPrefix = "compaction.modelOverrides"
	hooksKey                = "hooks"
	trustedProjectsKey      = "trustedProjects"
	// The fields of a per-model override.
	overrideReserveTokens    = "reserveTokens"
	overrideKeepRecentTokens = "keepRecentTokens"
)

const (
	maxSafeInteger = 1<<53 - 1 // JavaScript's Number.MAX_SAFE_INTEGER
	shownValueMax  = 60        // characters of an invalid value quoted in a message
)

// knownKeys are the settings Prime reads, in the order they are shown,
// with pi's defaults.
var knownKeys = [...]keyDef{
	{keyCompactionEnabled, kindBool, true, "compact automatically when the context fills up", nil, anyProject},
	{keyCompactionReserve, kindTokens, 16384, "tokens kept free for the model's reply; compaction starts when the context passes the window minus this", nil, anyProject},
	{keyCompactionKeepRecent, kindTokens, 20000, "tokens of recent conversation kept word for word", nil, anyProject},
	{keyCompactionModel, kindModel, nil, "the model that writes summaries (default: the session's model)", nil, anyProject},
	{keyBackground, kindBool, true, "write the summary in the background before the context fills up, so a compaction does not make you wait", nil, anyProject},
	{keyBackgroundThreshold, kindPercent, 80, "where the background summary starts: this percentage of the point where compaction starts", nil, anyProject},
	{keyBranchReserve, kindTokens, 16384, "tokens kept free when summarizing a branch you leave", nil, anyProject},
	{keyBranchSkipPrompt, kindBool, false, "leave a branch without asking whether to summarize it", nil, anyProject},
	{keyRetryEnabled, kindBool, true, "retry failed model requests", nil, anyProject},
	{keyRetryMaxRetries, kindCount, 3, "how many times to retry", nil, anyProject},
	{keyRetryBaseDelay, kindMillis, 2000, "the first retry's delay; each retry doubles it", nil, anyProject},
	{keyRetryMaxDelay, kindMillis, 60000, "the longest delay between retries", nil, anyProject},
	{keyStreamIdle, kindMillis, 300000, "how long a model's server may send nothing before the request fails and is retried (0: no limit)", nil, anyProject},
	{keyStreamKeepAlive, kindMillis, 1800000, "how long a model's server may send only keep-alives, no reply, before the request fails and is retried (0: no limit)", nil, anyProject},
	{keyDefaultProvider, kindString, nil, "the provider of the model to converse with (with defaultModel)", nil, anyProject},
	{keyDefaultModel, kindString, nil, "the model to converse with, by id (or provider/id)", nil, anyProject},
	{keyDefaultThinking, kindEnum, nil, "the thinking level of a new session", []string{"off", "minimal", "low", "medium", "high", "xhigh"}, anyProject},
	{keySteeringMode, kindEnum, "one-at-a-time", "how many queued steering messages are delivered at once", []string{"one-at-a-time", "all"}, anyProject},
	{keyFollowUpMode, kindEnum, "one-at-a-time", "how many queued follow-up messages are delivered at once", []string{"one-at-a-time", "all"}, anyProject},
	{keyShellPath, kindString, nil, "the shell the bash tool runs commands with (default /bin/bash)", nil, trustedProject},
	{keyHideThinking, kindBool, false, "show the model's thinking folded in the terminal UI", nil, anyProject},
	{keyDoubleEscape, kindEnum, "tree", "what Escape twice on an empty editor opens", []string{"tree", "fork", "none"}, anyProject},
	{keyMaxTurns, kindCount, 0, "the most turns the model may take for one prompt before the run stops (0: no limit)", nil, anyProject},
	{keyBashTimeout, kindCount, 0, "seconds after which a bash tool call that names no timeout is killed (0: none, as pi)", nil, anyProject},
	{keyEnvExclude, kindString, nil, "more variables (names or globs, comma-separated) kept out of commands' environment, besides API keys, tokens, secrets, passwords and AWS_*", nil, anyProject},
	{keyEnvInclude, kindString, nil, "variables (names or globs, comma-separated) commands inherit even though they look like secrets", nil, trustedProject},
	{keyEnvInherit, kindBool, false, "let commands inherit every variable, secrets included", nil, trustedProject},
	{keyPermMode, kindEnum, "sandbox", "how tools run: full (unconfined, as pi), ask (every bash, write and edit asks), sandbox (bash confined: writes only in the project and temp dirs, no network, secrets unreadable; anything beyond asks) or read-only (no file changes)", []string{"full", "ask", "sandbox", "read-only"}, tighterProject},
	{keyPermNetwork, kindBool, false, "let sandboxed commands use the network", nil, trustedProject},
	{keyPermDenyRead, kindString, nil, "more paths (comma-separated, ~ for home) sandboxed commands may not read, besides ~/.ssh, ~/.aws, ~/.gnupg, ~/.config/gcloud and the agent's auth file", nil, anyProject},
	{keyPermAllowWrite, kindString, nil, "more directories (comma-separated, ~ for home) sandboxed commands may write in, besides the project and temp dirs", nil, trustedProject},
}

// structuredKeys are the keys that are not plain values, with the same
// choice as every row of knownKeys.
var structuredKeys = [...]struct {
	name    string
	project projectRule
}{
	{modelOverridesKeyPrefix, anyProject},
	// The hook runner enforces this one itself, since it reports each hook
	// it skips and why (see hook.SkipUntrusted).
	{hooksKey, trustedProject},
	// Read from the global file only: a project cannot trust itself.
	{trustedProjectsKey, trustedProject},
}

// overrideFields are the fields of a per-model override (token counts).
var overrideFields = [...]string{overrideReserveTokens, overrideKeepRecentTokens}

func lookupDef(name string) *keyDef {
	for i := range knownKeys {
		if knownKeys[i].name == name {
			return &knownKeys[i]
		}
	}
	return nil
}

// KeyInfo describes one setting Prime knows.
type KeyInfo struct {
	// Name is the key as written on a command line: "compaction.enabled".
	Name string
	// Default is a bool or an int, or nil when unset means "use the
	// session's model" (compaction.model).
	Default any
	// Summary says what the setting does, in one line.
	Summary string
	// NeedsTrust means the setting can run code or send data elsewhere, so
	// a project's settings file sets it only once the user has trusted the
	// project (prime trust).
	NeedsTrust bool
}

// Keys lists the settings Prime knows, in display order. The per-model
// override keys (compaction.modelOverrides["provider/id"].reserveTokens
// and .keepRecentTokens) are not listed.
func Keys() []KeyInfo {
	out := make([]KeyInfo, len(knownKeys))
	for i, d := range knownKeys {
		out[i] = KeyInfo{Name: d.name, Default: d.def, Summary: d.summary, NeedsTrust: d.project == trustedProject}
	}
	return out
}

// key is a parsed settings key: a known key, or one field of a per-model
// override.
type key struct {
	def   *keyDef
	model string // the override's "provider/id"; empty for a plain key
	field string // the override's field
}

// parseKey reads a key as users write it: a known key's name, or
// compaction.modelOverrides["provider/id"].field (the quotes are optional).
func parseKey(s string) (key, error) {
	if d := lookupDef(s); d != nil {
		return key{def: d}, nil
	}
	rest, ok := strings.CutPrefix(s, modelOverridesKeyPrefix+"[")
	if !ok {
		return key{}, fmt.Errorf("unknown setting %q (known: %s, %s[\"provider/id\"].reserveTokens|keepRecentTokens)", s, knownNames(), modelOverridesKeyPrefix)
	}
	i := strings.LastIndex(rest, "].")
	if i < 0 {
		return key{}, fmt.Errorf("setting %q: want %s[\"provider/id\"].reserveTokens or .keepRecentTokens", s, modelOverridesKeyPrefix)
	}
	model, field := rest[:i], rest[i+2:]
	if strings.HasPrefix(model, `"`) {
		b, err := jsontext.AppendUnquote(nil, model)
		if err != nil {
			return key{}, fmt.Errorf("setting %q: the model name is not a valid quoted string", s)
		}
		model = string(b)
	}
	if !validModel(model) {
		return key{}, fmt.Errorf("setting %q: %q is not a model as \"provider/id\"", s, model)
	}
	if field != overrideReserveTokens && field != overrideKeepRecentTokens {
		return key{}, fmt.Errorf("setting %q: a per-model override sets only reserveTokens or keepRecentTokens", s)
	}
	return key{def: lookupDef("compaction." + field), model: model, field: field}, nil
}

func knownNames() string {
	names := make([]string, len(knownKeys))
	for i, d := range knownKeys {
		names[i] = d.name
	}
	return strings.Join(names, ", ")
}

// path is the key's place in a settings file.
func (k key) path() []string {
	if k.model != "" {
		return []string{"compaction", modelOverridesField, k.model, k.field}
	}
	if k.def.section() == "" {
		return []string{k.def.field()}
	}
	return []string{k.def.section(), k.def.field()}
}

// String returns the key as users write it.
func (k key) String() string {
	if k.model != "" {
		return overrideKeyName(k.model, k.field)
	}
	return k.def.name
}

// overrideKeyName is how a per-model override's field is shown, in the
// notation of pi's messages: compaction.modelOverrides["p/m"].reserveTokens.
func overrideKeyName(model, field string) string {
	return overrideEntryName(model) + "." + field
}

// overrideEntryName names one model's override entry:
// compaction.modelOverrides["p/m"].
func overrideEntryName(model string) string {
	q, err := jsontext.AppendQuote(nil, model)
	if err != nil {
		q = []byte(strconv.Quote(model))
	}
	return modelOverridesKeyPrefix + "[" + string(q) + "]"
}

// parseValue reads a value as typed on a command line and returns it as a
// bool, an int or a string, and as JSON text for the file.
func (k key) parseValue(text string) (any, []byte, error) {
	switch k.def.kind {
	case kindBool:
		switch text {
		case "true":
			return true, []byte("true"), nil
		case "false":
			return false, []byte("false"), nil
		}
		return nil, nil, fmt.Errorf("%s: %q is not %s", k, text, k.def.kind.want())
	case kindString, kindEnum:
		if strings.TrimSpace(text) == "" || k.def.kind == kindEnum && !slices.Contains(k.def.values, text) {
			return nil, nil, fmt.Errorf("%s: %q is not %s", k, text, k.def.want())
		}
		b, err := jsontext.AppendQuote(nil, text)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %q: %w", k, text, err)
		}
		return text, b, nil
	case kindModel:
		if !validModel(text) {
			return nil, nil, fmt.Errorf("%s: %q is not %s", k, text, k.def.kind.want())
		}
		b, err := jsontext.AppendQuote(nil, text)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %q: %w", k, text, err)
		}
		return text, b, nil
	default:
		n, err := strconv.ParseInt(text, 10, 64)
		switch {
		case err == nil && n < 0:
			return nil, nil, fmt.Errorf("%s: %s is negative; want %s", k, text, k.def.kind.want())
		case err != nil || n > maxSafeInteger || n > math.MaxInt:
			return nil, nil, fmt.Errorf("%s: %q is not %s", k, text, k.def.kind.want())
		case k.def.kind == kindPercent && (n < 1 || n > 100):
			return nil, nil, fmt.Errorf("%s: %s is out of range; want %s", k, text, k.def.kind.want())
		}
		return int(n), []byte(strconv.FormatInt(n, 10)), nil
	}
}

// validModel reports whether s names a model as "provider/id": two
// non-empty parts around the first slash (the id may hold more slashes, as
// in "openrouter/anthropic/claude-sonnet-4").
func validModel(s string) bool {
	p, id, ok := strings.Cut(s, "/")
	return ok && p != "" && id != "" && strings.TrimSpace(s) == s
}

// readValue checks a value read from a settings file against kind k and
// returns it as a bool, an int or a string, or an error message that names
// the value.
func readValue(doc *jsonedit.Doc, n *jsonedit.Node, d *keyDef) (any, string) {
	raw := doc.Raw(n)
	k := d.kind
	switch k {
	case kindBool:
		if n.Kind == 't' || n.Kind == 'f' {
			return n.Kind == 't', ""
		}
	case kindModel:
		if n.Kind == '"' {
			var s string
			if b, err := jsontext.AppendUnquote(nil, raw); err == nil {
				s = string(b)
			}
			if validModel(s) {
				return s, ""
			}
			return nil, fmt.Sprintf("%s is not %s", shown(raw), k.want())
		}
	case kindString, kindEnum:
		if n.Kind == '"' {
			var s string
			if b, err := jsontext.AppendUnquote(nil, raw); err == nil {
				s = string(b)
			}
			if strings.TrimSpace(s) != "" && (k == kindString || slices.Contains(d.values, s)) {
				return s, ""
			}
			return nil, fmt.Sprintf("%s is not %s", shown(raw), d.want())
		}
	default:
		if n.Kind == '0' {
			v, msg := readWhole(raw, k)
			if pct, ok := v.(int); ok && k == kindPercent && (pct < 1 || pct > 100) {
				return nil, fmt.Sprintf("%s is out of range; want %s", shown(raw), k.want())
			}
			return v, msg
		}
	}
	return nil, fmt.Sprintf("%s is %s; want %s", shown(raw), jsonedit.KindName(n.Kind), d.want())
}

// readWhole reads a JSON number that must be a non-negative safe integer
// (pi 1.6's rule for token counts). 1e3 and 2.0 are whole numbers.
func readWhole(raw []byte, k kind) (any, string) {
	f, err := strconv.ParseFloat(string(raw), 64)
	switch {
	case err != nil || math.IsInf(f, 0):
		return nil, fmt.Sprintf("%s is too large; want %s", shown(raw), k.want())
	case f < 0:
		return nil, fmt.Sprintf("%s is negative; want %s", shown(raw), k.want())
	case f != math.Trunc(f):
		return nil, fmt.Sprintf("%s is not a whole number; want %s", shown(raw), k.want())
	case f > maxSafeInteger || f > math.MaxInt:
		return nil, fmt.Sprintf("%s is too large; want %s", shown(raw), k.want())
	}
	return int(f), ""
}

// shown quotes a value from a file for a message, shortened if long.
func shown(raw []byte) string {
	s := strings.Join(strings.Fields(string(raw)), " ")
	if r := []rune(s); len(r) > shownValueMax {
		s = string(r[:shownValueMax-1]) + "…"
	}
	return s
}
