package compaction

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"

	"github.com/prime-agent/prime/internal/pifixtures"
	"github.com/prime-agent/prime/internal/pioracle"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/session/sessiongen"
)

// The pi oracle comparison: Prime's preparation against pi 1.6's own
// prepareCompaction (tools/pioracle) on many generated sessions and on pi's
// real files. It runs only when PRIME_PIORACLE names the wrapper:
//
//	PRIME_PIORACLE=$PWD/tools/pioracle/pioracle go test ./compaction -run PiOracle -v
//
// PRIME_PIORACLE_SEEDS (default 3) sets how many sessions of each kind are
// generated. Every difference must be one that compaction/doc.go documents
// as a deliberate decision (see explainDifference); any other fails the
// test.

// piPrepare is the answer of the oracle's prepare command, and the same
// facts computed by Prime (see primePrepare).
type piPrepare struct {
	Error               string     `json:"error"`
	Compactable         bool       `json:"compactable"`
	FirstKept           *piEntry   `json:"firstKept"`
	IsSplitTurn         bool       `json:"isSplitTurn"`
	MessagesToSummarize piMessages `json:"messagesToSummarize"`
	TurnPrefixMessages  piMessages `json:"turnPrefixMessages"`
	TokensBefore        int        `json:"tokensBefore"`
	PreviousSummary     struct {
		Present bool `json:"present"`
		Length  int  `json:"length"`
	} `json:"previousSummary"`
	ReadFiles     []string `json:"readFiles"`
	ModifiedFiles []string `json:"modifiedFiles"`
}

type piEntry struct {
	Index int    `json:"index"` // in file order
	Type  string `json:"type"`
	Role  string `json:"role"`
}

type piMessages struct {
	Count int      `json:"count"`
	Items []piItem `json:"items"`
}

// piItem is one message of a span: its role, timestamp, estimate, and the
// entry it came from when it is a stored message (nil otherwise).
type piItem struct {
	Role      string `json:"role"`
	Timestamp *int64 `json:"timestamp"`
	Tokens    int    `json:"tokens"`
	Index     *int   `json:"index"`
}

// piContext is the answer of the oracle's context command.
type piContext struct {
	Error         string     `json:"error"`
	PathLength    int        `json:"pathLength"`
	Messages      int        `json:"messages"`
	Estimate      piEstimate `json:"estimate"`
	ThinkingLevel string     `json:"thinkingLevel"`
	Model         *struct {
		Provider string `json:"provider"`
		ModelID  string `json:"modelId"`
	} `json:"model"`
}

type piEstimate struct {
	Tokens         int  `json:"tokens"`
	UsageTokens    int  `json:"usageTokens"`
	TrailingTokens int  `json:"trailingTokens"`
	LastUsageIndex *int `json:"lastUsageIndex"`
}

// oracleRequest is one line of the oracle's batch input.
type oracleRequest struct {
	Cmd              string `json:"cmd"`
	File             string `json:"file"`
	Leaf             string `json:"leaf,omitzero"`
	KeepRecentTokens int    `json:"keepRecentTokens,omitzero"`
}

// askOracle runs the oracle's batch mode on reqs and returns its answers in
// order. It skips the test when PRIME_PIORACLE is not set.
func askOracle(t *testing.T, reqs []oracleRequest) []jsontext.Value {
	t.Helper()
	bin := pioracle.Path(t)
	var in bytes.Buffer
	for _, r := range reqs {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		in.Write(b)
		in.WriteByte('\n')
	}
	cmd := exec.Command(bin, "batch")
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pioracle batch: %v\n%s", err, stderr.Bytes())
	}
	var answers []jsontext.Value
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 256<<20)
	for sc.Scan() {
		answers = append(answers, jsontext.Value(bytes.Clone(sc.Bytes())))
	}
	if len(answers) != len(reqs) {
		t.Fatalf("pioracle batch: %d answers to %d requests\n%s", len(answers), len(reqs), stderr.Bytes())
	}
	return answers
}

// oracleFile is one session file of the comparison, loaded by Prime.
type oracleFile struct {
	name string
	path string
	s    *session.Session
	// index maps entry ids to positions in file order.
	index map[string]int
}

func loadOracleFile(t *testing.T, name, path string) *oracleFile {
	t.Helper()
	s, err := session.Load(path)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	f := &oracleFile{name: name, path: path, s: s, index: map[string]int{}}
	for i, e := range s.Entries() {
		f.index[e.ID] = i
	}
	return f
}

// leaves picks the positions the comparison prepares at: the file's leaf,
// the other branches' leaves, points a quarter, half and three quarters in,
// each compaction and the entry after it (up to four), and a few random
// entries.
func (f *oracleFile) leaves(seed uint64) []int {
	es := f.s.Entries()
	n := len(es)
	set := map[int]bool{n - 1: true, n / 4: true, n / 2: true, 3 * n / 4: true}
	for i, e := range f.s.Leaves() {
		if i < 4 {
			set[f.index[e.ID]] = true
		}
	}
	compactions := 0
	for i, e := range es {
		if e.Type != session.TypeCompaction || compactions >= 4 {
			continue
		}
		compactions++
		set[i] = true
		if kids := f.s.Children(e.ID); len(kids) > 0 {
			set[f.index[kids[0].ID]] = true
		}
	}
	r := rand.New(rand.NewPCG(seed, 7))
	for range 3 {
		set[r.IntN(n)] = true
	}
	out := make([]int, 0, len(set))
	for i := range set {
		out = append(out, i)
	}
	sort.Ints(out)
	return out
}

// oracleKeeps are the keepRecentTokens settings every leaf is prepared with.
var oracleKeeps = []int{1, 100, 2000, 20000, 50000}

// oracleSessions generates the session files of the comparison: every
// generator option, several seeds each.
func oracleSessions(t *testing.T, dir string) []*oracleFile {
	seeds := 3
	if v := os.Getenv("PRIME_PIORACLE_SEEDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("PRIME_PIORACLE_SEEDS=%q: want a positive number", v)
		}
		seeds = n
	}
	kinds := []struct {
		name string
		o    sessiongen.Options
	}{
		{"default", sessiongen.Options{Entries: 1500}},
		{"no-compactions", sessiongen.Options{Entries: 800, NoCompactions: true}},
		{"small-window", sessiongen.Options{Entries: 1500, ContextWindow: 30000, KeepRecentTokens: 4000}},
		// A window barely above reserve + keep: each compaction keeps the
		// previous one inside its kept range.
		{"nested-kept", sessiongen.Options{Entries: 1500, ContextWindow: 40000}},
		{"branches", sessiongen.Options{Entries: 1500, BranchRate: 0.25, ContextWindow: 60000}},
		{"huge-results", sessiongen.Options{Entries: 1200, HugeRate: 0.05, TrailingHugeResults: 2, ContextWindow: 80000}},
		{"images", sessiongen.Options{Entries: 1200, ImageRate: 0.3, ContextWindow: 60000}},
		{"large-texts", sessiongen.Options{Entries: 1000, SizeScale: 3, ContextWindow: 100000}},
		{"small-texts", sessiongen.Options{Entries: 1500, SizeScale: 0.2, ContextWindow: 20000, KeepRecentTokens: 2000}},
		{"trailing-huge", sessiongen.Options{Entries: 600, TrailingHugeResults: 3, NoCompactions: true}},
	}
	var files []*oracleFile
	for _, k := range kinds {
		for seed := range uint64(seeds) {
			o := k.o
			o.Seed = seed + 1
			name := fmt.Sprintf("%s-%d", k.name, o.Seed)
			path := filepath.Join(dir, name+".jsonl")
			if err := os.WriteFile(path, sessiongen.Bytes(o), 0o600); err != nil {
				t.Fatal(err)
			}
			files = append(files, loadOracleFile(t, name, path))
		}
	}
	return files
}

// TestPiOracle compares Prime's preparation and context estimate with pi
// 1.6's on generated sessions and on pi's own files, and reports the
// number of cases and of differences by category.
func TestPiOracle(t *testing.T) {
	pioracle.Path(t)
	files := oracleSessions(t, t.TempDir())
	if dir, ok := pifixtures.Dir(); ok {
		for _, name := range []string{pifixtures.LargeSession, pifixtures.BeforeCompaction} {
			files = append(files, loadOracleFile(t, name, filepath.Join(dir, name)))
		}
	}
	type oracleCase struct {
		f    *oracleFile
		leaf int
		keep int // 0: a context request
	}
	var cases []oracleCase
	var reqs []oracleRequest
	for fi, f := range files {
		for _, leaf := range f.leaves(uint64(fi)) {
			ref := "#" + strconv.Itoa(leaf)
			cases = append(cases, oracleCase{f, leaf, 0})
			reqs = append(reqs, oracleRequest{Cmd: "context", File: f.path, Leaf: ref})
			for _, k := range oracleKeeps {
				cases = append(cases, oracleCase{f, leaf, k})
				reqs = append(reqs, oracleRequest{Cmd: "prepare", File: f.path, Leaf: ref, KeepRecentTokens: k})
			}
		}
	}
	answers := askOracle(t, reqs)
	categories := map[string]int{}
	failures := 0
	for i, c := range cases {
		where := fmt.Sprintf("%s leaf #%d keep %d", c.f.name, c.leaf, c.keep)
		path := c.f.s.Path(c.f.s.Entries()[c.leaf].ID)
		var diff, category string
		if c.keep == 0 {
			var pi piContext
			if err := json.Unmarshal(answers[i], &pi); err != nil || pi.Error != "" {
				t.Fatalf("%s: oracle: %v %s", where, err, pi.Error)
			}
			category = "context: same"
			if diff = cmp.Diff(pi, primeContext(t, path)); diff != "" {
				category = "context: unexplained"
			}
		} else {
			var pi piPrepare
			if err := json.Unmarshal(answers[i], &pi); err != nil || pi.Error != "" {
				t.Fatalf("%s: oracle: %v %s", where, err, pi.Error)
			}
			prime := primePrepare(t, c.f, path, c.keep)
			category, diff = explainDifference(c.f, path, prime, pi)
			category = "prepare: " + category
		}
		categories[category]++
		if strings.HasSuffix(category, "unexplained") {
			failures++
			if failures <= 10 {
				t.Errorf("%s: Prime differs from pi 1.6 (-pi +Prime):\n%s", where, diff)
			}
		}
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range categories {
			if !yield(k) {
				return
			}
		}
	})
	t.Logf("%d files, %d cases compared with pi 1.6:", len(files), len(cases))
	for _, k := range names {
		t.Logf("  %6d  %s", categories[k], k)
	}
	if failures > 10 {
		t.Errorf("%d more unexplained differences", failures-10)
	}
}

// primeContext describes Prime's context at the end of path as the oracle
// describes pi's.
func primeContext(t *testing.T, path []*session.Entry) piContext {
	ctx, err := session.BuildContext(path)
	if err != nil {
		t.Fatal(err)
	}
	est := session.EstimateContextTokens(ctx.Messages)
	out := piContext{
		PathLength:    len(path),
		Messages:      len(ctx.Messages),
		Estimate:      piEstimate{Tokens: est.Tokens, UsageTokens: est.UsageTokens, TrailingTokens: est.TrailingTokens},
		ThinkingLevel: string(ctx.ThinkingLevel),
	}
	if est.LastUsageIndex >= 0 {
		out.Estimate.LastUsageIndex = &est.LastUsageIndex
	}
	if ctx.Model != nil {
		out.Model = &struct {
			Provider string `json:"provider"`
			ModelID  string `json:"modelId"`
		}{ctx.Model.Provider, ctx.Model.ModelID}
	}
	return out
}

// primePrepare describes Prime's preparation at the end of path as the
// oracle describes pi's. Messages are named by the entries they were
// decoded from: the entries' messages are decoded first and kept, so the
// preparation shares them.
func primePrepare(t *testing.T, f *oracleFile, path []*session.Entry, keepRecent int) piPrepare {
	from := map[session.Message]int{}
	for _, e := range path {
		if e.Type == session.TypeMessage {
			if m, err := e.Message(); err == nil {
				from[m] = f.index[e.ID]
			}
		}
	}
	prep, err := Prepare(path, Settings{Enabled: true, ReserveTokens: DefaultReserveTokens, KeepRecentTokens: keepRecent})
	if errors.Is(err, ErrNothingToCompact) || errors.Is(err, ErrAlreadyCompacted) {
		return piPrepare{}
	}
	if err != nil {
		t.Fatal(err)
	}
	items := func(msgs []session.Message) piMessages {
		out := piMessages{Count: len(msgs), Items: []piItem{}}
		for _, m := range msgs {
			ts := session.MessageTimestamp(m)
			it := piItem{Role: m.Role(), Timestamp: &ts, Tokens: session.EstimateTokens(m)}
			if i, ok := from[m]; ok {
				it.Index = &i
			}
			out.Items = append(out.Items, it)
		}
		return out
	}
	first := f.s.Entry(prep.FirstKeptEntryID)
	kept := &piEntry{Index: f.index[first.ID], Type: first.Type}
	if first.Type == session.TypeMessage {
		kept.Role, _ = first.MessageRole()
	}
	out := piPrepare{
		Compactable:         true,
		FirstKept:           kept,
		IsSplitTurn:         prep.IsSplitTurn,
		MessagesToSummarize: items(prep.MessagesToSummarize),
		TurnPrefixMessages:  items(prep.TurnPrefixMessages),
		TokensBefore:        prep.TokensBefore,
		ReadFiles:           prep.ReadFiles(),
		ModifiedFiles:       prep.ModifiedFiles(),
	}
	if out.ReadFiles == nil {
		out.ReadFiles = []string{}
	}
	if out.ModifiedFiles == nil {
		out.ModifiedFiles = []string{}
	}
	out.PreviousSummary.Present = hasCompaction(path)
	out.PreviousSummary.Length = llm.UTF16Len(prep.PreviousSummary)
	return out
}

func hasCompaction(path []*session.Entry) bool {
	for _, e := range path {
		if e.Type == session.TypeCompaction {
			return true
		}
	}
	return false
}

// comparePrepare compares pi's answer with Prime's. Timestamps pi leaves
// null are Prime's 0.
var comparePrepare = cmp.Options{
	cmp.Comparer(func(a, b *int64) bool {
		v := func(p *int64) int64 {
			if p == nil {
				return 0
			}
			return *p
		}
		return v(a) == v(b)
	}),
	cmp.FilterPath(func(p cmp.Path) bool {
		// pi names only stored messages' entries; Prime names them too
		// where pi cannot.
		return p.Last().String() == ".Index"
	}, cmp.Comparer(func(a, b *int) bool { return a == nil || b == nil || *a == *b })),
}

// explainDifference compares Prime's preparation with pi's and names the
// outcome: "same", one or more documented decisions (compaction/doc.go)
// that account for every difference, or "unexplained" with the diff.
//
// Each decision is applied to pi's answer only where its precondition
// holds, turning it into what Prime's rule gives; the result must then be
// equal to Prime's in every field.
func explainDifference(f *oracleFile, path []*session.Entry, prime, pi piPrepare) (category, diff string) {
	if cmp.Equal(pi, prime, comparePrepare) {
		if !pi.Compactable {
			return "same (nothing to compact)", ""
		}
		return "same", ""
	}
	var applied []string
	want := pi
	if metadataSplit(f, path, &want, prime) {
		applied = append(applied, "#6 no split at a metadata entry before a turn start")
	}
	if branchSummaryFiles(f, path, &want, prime) {
		applied = append(applied, "#20 branch summaries' file lists carried")
	}
	if diff := cmp.Diff(want, prime, comparePrepare); diff != "" || len(applied) == 0 {
		return "unexplained", cmp.Diff(pi, prime, comparePrepare)
	}
	return strings.Join(applied, " + "), ""
}

// metadataSplit applies Prime's fix of pi-reference §10.1 #6 (doc.go,
// "pi bugs fixed"): when pi's first kept entry is one the model does not
// see and the cut point after it starts a turn, pi calls the complete turn
// before it a split turn's prefix; Prime keeps the same first entry but
// summarizes that turn as history. It reports whether it changed want.
func metadataSplit(f *oracleFile, path []*session.Entry, want *piPrepare, prime piPrepare) bool {
	if !want.Compactable || !want.IsSplitTurn || prime.IsSplitTurn || want.FirstKept == nil || prime.FirstKept == nil ||
		want.FirstKept.Index != prime.FirstKept.Index {
		return false
	}
	at := slices.IndexFunc(path, func(e *session.Entry) bool { return f.index[e.ID] == want.FirstKept.Index })
	if at < 0 {
		return false
	}
	if m, err := session.ContextMessage(path[at]); err != nil || m != nil {
		return false // the model sees the first kept entry
	}
	// The cut point the keep-recent walk chose is the next entry the model
	// sees in the projection (compactions on the path are not in it).
	var anchor session.Message
	for _, e := range path[at+1:] {
		if e.Type == session.TypeCompaction {
			continue
		}
		if m, _ := session.ContextMessage(e); m != nil {
			anchor = m
			break
		}
	}
	switch anchor.(type) {
	case *llm.UserMessage, *session.BashExecution, *session.CustomMessage, *session.BranchSummaryMessage:
	default:
		return false
	}
	want.IsSplitTurn = false
	want.MessagesToSummarize.Count += want.TurnPrefixMessages.Count
	want.MessagesToSummarize.Items = append(slices.Clone(want.MessagesToSummarize.Items), want.TurnPrefixMessages.Items...)
	want.TurnPrefixMessages = piMessages{Items: []piItem{}}
	return true
}

// branchSummaryFiles applies Prime's fix of pi-reference §10.1 #20 (doc.go,
// step 9 of Preparation): the file lists of branch summaries inside the
// summarized span join the compaction's lists. It reports whether it
// changed want.
func branchSummaryFiles(f *oracleFile, path []*session.Entry, want *piPrepare, prime piPrepare) bool {
	if !want.Compactable || prime.FirstKept == nil {
		return false
	}
	// The span runs from the previous compaction's kept entry (or its
	// successor, or the root) to the first kept entry.
	latest := -1
	for i := len(path) - 1; i >= 0; i-- {
		if path[i].Type == session.TypeCompaction {
			latest = i
			break
		}
	}
	start := 0
	if latest >= 0 {
		start = latest + 1
		if k := session.KeptStart(path, latest); k >= 0 {
			start = k
		}
	}
	end := slices.IndexFunc(path, func(e *session.Entry) bool { return f.index[e.ID] == prime.FirstKept.Index })
	if end < 0 {
		return false
	}
	var t fileTracker
	found := false
	for _, e := range path[start:end] {
		if e.Type != session.TypeBranchSummary {
			continue
		}
		p, err := e.Payload()
		if err != nil {
			continue
		}
		if bs := p.(*session.BranchSummaryEntry); !bs.FromHook && bs.Summary != "" {
			if d, ok := ParseDetails(bs.Details); ok && len(d.ReadFiles)+len(d.ModifiedFiles) > 0 {
				t.addDetails(d)
				found = true
			}
		}
	}
	if !found {
		return false
	}
	for _, p := range want.ReadFiles {
		addTo(&t.read, p)
	}
	for _, p := range want.ModifiedFiles {
		addTo(&t.edited, p)
	}
	read, modified := t.lists()
	if read == nil {
		read = []string{}
	}
	if modified == nil {
		modified = []string{}
	}
	if slices.Equal(read, want.ReadFiles) && slices.Equal(modified, want.ModifiedFiles) {
		return false
	}
	want.ReadFiles, want.ModifiedFiles = read, modified
	return true
}
