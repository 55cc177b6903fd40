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
// prepareCompaction (internal/pioracle/harness) on many generated sessions and on pi's
// real files. It runs only when PRIME_PIORACLE names the wrapper:
//
//	PRIME_PIORACLE=$PWD/internal/pioracle/harness/pioracle go test ./compaction -run PiOracle -v
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
	Projected     piEstimate `json:"projectedEstimate"`
	Items         []piItem   `json:"items"`
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

// piBranch is the answer of the oracle's branch command, and the same
// facts computed by Prime (see primeBranch).
type piBranch struct {
	Error     string `json:"error"`
	Collected struct {
		Count int `json:"count"`
	} `json:"collected"`
	TokenBudget   int        `json:"tokenBudget"`
	Messages      piMessages `json:"messages"`
	TotalTokens   int        `json:"totalTokens"`
	ReadFiles     []string   `json:"readFiles"`
	ModifiedFiles []string   `json:"modifiedFiles"`
}

// oracleRequest is one line of the oracle's batch input.
type oracleRequest struct {
	Cmd              string `json:"cmd"`
	File             string `json:"file"`
	Leaf             string `json:"leaf,omitzero"`
	KeepRecentTokens int    `json:"keepRecentTokens,omitzero"`
	From             string `json:"from,omitzero"`
	To               string `json:"to,omitzero"`
	ContextWindow    int    `json:"contextWindow,omitzero"`
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
	// edge marks a hand-written edge case: every entry is a leaf, a
	// branch target, and prepared with every keep of edgeKeeps.
	edge bool
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

// leaves picks the positions the comparison prepares at: every entry of an
// edge case; else the file's leaf,
// the other branches' leaves, points a quarter, half and three quarters in,
// each compaction and the entry after it (up to four), and a few random
// entries.
func (f *oracleFile) leaves(seed uint64) []int {
	es := f.s.Entries()
	n := len(es)
	if f.edge {
		return f.targets(0, seed)
	}
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
	return sortedSet(set)
}

// sortedSet returns the members of set in ascending order.
func sortedSet(set map[int]bool) []int {
	out := make([]int, 0, len(set))
	for i := range set {
		out = append(out, i)
	}
	sort.Ints(out)
	return out
}

// oracleKeeps are the keepRecentTokens settings every leaf is prepared
// with; edgeKeeps those of the edge cases, whose sessions are small.
var (
	oracleKeeps = []int{1, 100, 2000, 20000, 50000}
	edgeKeeps   = []int{1, 10, 40, 100, 400, 2000}
)

// branchWindows are the context windows branch summaries are prepared
// with: pi's fallback (a budget of 111,616 tokens) and windows leaving
// budgets of 200 and 2,000 tokens over branchSummary.reserveTokens.
var branchWindows = []int{0, DefaultBranchSummaryReserveTokens + 200, DefaultBranchSummaryReserveTokens + 2000}

// targets picks the entries a branch summary is prepared for, navigating
// from leaf: every entry of an edge case; else the first entry, three
// random ones and the entry two before the leaf.
func (f *oracleFile) targets(leaf int, seed uint64) []int {
	n := f.s.Len()
	if f.edge {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	r := rand.New(rand.NewPCG(seed, 11))
	set := map[int]bool{0: true, max(0, leaf-2): true}
	for range 3 {
		set[r.IntN(n)] = true
	}
	return sortedSet(set)
}

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
		// pi 1.6's transcript: system messages and patches, failed
		// attempts hidden by context edits, compactions carrying the
		// system state.
		{"pi16", sessiongen.Options{Entries: 1500, Pi16: true}},
		{"pi16-small-window", sessiongen.Options{Entries: 1500, ContextWindow: 30000, KeepRecentTokens: 4000, Pi16: true}},
		{"pi16-nested-kept", sessiongen.Options{Entries: 1500, ContextWindow: 40000, Pi16: true}},
		{"pi16-branches", sessiongen.Options{Entries: 1500, BranchRate: 0.25, ContextWindow: 60000, Pi16: true}},
		{"pi16-small-texts", sessiongen.Options{Entries: 1500, SizeScale: 0.2, ContextWindow: 20000, KeepRecentTokens: 2000, Pi16: true}},
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

// TestPiOracle compares Prime's contexts (messages, estimates), preparations
// and branch-summary walks with pi 1.6's on generated sessions, on
// sessiongen's edge cases (at every entry) and on pi's own files, and
// reports the number of cases and of differences by category.
func TestPiOracle(t *testing.T) {
	pioracle.Path(t)
	dir := t.TempDir()
	files := oracleSessions(t, dir)
	for _, c := range sessiongen.EdgeCases() {
		path := filepath.Join(dir, c.Name+".jsonl")
		if err := os.WriteFile(path, c.Data, 0o600); err != nil {
			t.Fatal(err)
		}
		f := loadOracleFile(t, c.Name, path)
		f.edge = true
		files = append(files, f)
	}
	if dir, ok := pifixtures.Dir(); ok {
		for _, name := range []string{pifixtures.LargeSession, pifixtures.BeforeCompaction} {
			files = append(files, loadOracleFile(t, name, filepath.Join(dir, name)))
		}
	}
	type oracleCase struct {
		f      *oracleFile
		req    oracleRequest
		leaf   int // the context's or preparation's leaf, the branch's old leaf
		target int // the branch's target
	}
	var cases []oracleCase
	for fi, f := range files {
		keeps := oracleKeeps
		if f.edge {
			keeps = edgeKeeps
		}
		leaves := f.leaves(uint64(fi))
		for li, leaf := range leaves {
			ref := "#" + strconv.Itoa(leaf)
			cases = append(cases, oracleCase{f, oracleRequest{Cmd: "context", File: f.path, Leaf: ref}, leaf, 0})
			for _, k := range keeps {
				cases = append(cases, oracleCase{f, oracleRequest{Cmd: "prepare", File: f.path, Leaf: ref, KeepRecentTokens: k}, leaf, 0})
			}
			// Branches from the last leaf only (and from a middle one of
			// the generated files), to keep the count in bounds.
			if li != len(leaves)-1 && (f.edge || li != len(leaves)/2) {
				continue
			}
			for _, to := range f.targets(leaf, uint64(fi)) {
				for _, w := range branchWindows {
					cases = append(cases, oracleCase{f, oracleRequest{Cmd: "branch", File: f.path, From: ref, To: "#" + strconv.Itoa(to), ContextWindow: w}, leaf, to})
				}
			}
		}
	}
	reqs := make([]oracleRequest, len(cases))
	for i, c := range cases {
		reqs[i] = c.req
	}
	answers := askOracle(t, reqs)
	categories := map[string]int{}
	failures := 0
	for i, c := range cases {
		where := fmt.Sprintf("%s %s leaf #%d keep %d", c.f.name, c.req.Cmd, c.leaf, c.req.KeepRecentTokens)
		path := c.f.s.Path(c.f.s.Entries()[c.leaf].ID)
		var diff, category string
		switch c.req.Cmd {
		case "context":
			var pi piContext
			if err := json.Unmarshal(answers[i], &pi); err != nil || pi.Error != "" {
				t.Fatalf("%s: oracle: %v %s", where, err, pi.Error)
			}
			category = "context: same"
			if diff = cmp.Diff(pi, primeContext(t, c.f, path)); diff != "" {
				category = "context: unexplained"
			}
		case "prepare":
			var pi piPrepare
			if err := json.Unmarshal(answers[i], &pi); err != nil || pi.Error != "" {
				t.Fatalf("%s: oracle: %v %s", where, err, pi.Error)
			}
			prime := primePrepare(t, c.f, path, c.req.KeepRecentTokens)
			category, diff = explainDifference(c.f, path, prime, pi)
			category = "prepare: " + category
		case "branch":
			where = fmt.Sprintf("%s branch #%d → #%d window %d", c.f.name, c.leaf, c.target, c.req.ContextWindow)
			var pi piBranch
			if err := json.Unmarshal(answers[i], &pi); err != nil {
				t.Fatalf("%s: oracle: %v", where, err)
			}
			if pi.Error != "" {
				// pi's branch walk reads a system message's content
				// without its null check and fails on null; Prime reads
				// null as "".
				br := CollectBranch(path, c.f.s.Path(c.f.s.Entries()[c.target].ID))
				if !strings.Contains(pi.Error, "content is not iterable") || !nullSystemContent(br.Entries) {
					t.Fatalf("%s: oracle: %s", where, pi.Error)
				}
				category = "branch: pi 1.6 fails on a system message with null content"
				break
			}
			category = "branch: same"
			if diff = cmp.Diff(pi, primeBranch(t, c.f, path, c.target, c.req.ContextWindow), comparePrepare); diff != "" {
				category = "branch: unexplained"
			}
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
func primeContext(t *testing.T, f *oracleFile, path []*session.Entry) piContext {
	ctx, err := session.BuildContext(path)
	if err != nil {
		t.Fatal(err)
	}
	estimate := func(est session.ContextEstimate) piEstimate {
		e := piEstimate{Tokens: est.Tokens, UsageTokens: est.UsageTokens, TrailingTokens: est.TrailingTokens}
		if est.LastUsageIndex >= 0 {
			e.LastUsageIndex = &est.LastUsageIndex
		}
		return e
	}
	out := piContext{
		PathLength:    len(path),
		Messages:      len(ctx.Messages),
		Estimate:      estimate(session.EstimateContextTokens(ctx.Messages)),
		Projected:     estimate(ctx.EstimateNext()),
		Items:         []piItem{},
		ThinkingLevel: string(ctx.ThinkingLevel),
	}
	for i, m := range ctx.Messages {
		index := f.index[ctx.Entries[i].ID]
		out.Items = append(out.Items, piItem{Role: m.Role(), Tokens: session.EstimateTokens(m), Index: &index})
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
	proj, err := projectPath(path)
	if err != nil {
		t.Fatal(err)
	}
	out.PreviousSummary.Present = proj.compaction != nil // a context edit may hide it
	out.PreviousSummary.Length = llm.UTF16Len(prep.PreviousSummary)
	return out
}

// primeBranch describes the branch summary Prime prepares when navigating
// from the end of path to the file's target-th entry, as the oracle
// describes pi's. It applies pi's rules (prepareBranch with piRules): the
// walk and its numbers must then be pi's exactly; what Prime adds to them
// (§10.1 #20) is checked by TestPrepareBranch.
func primeBranch(t *testing.T, f *oracleFile, path []*session.Entry, target, window int) piBranch {
	br := CollectBranch(path, f.s.Path(f.s.Entries()[target].ID))
	budget := BranchBudget(llm.Model{ContextWindow: window}, DefaultBranchSummaryReserveTokens)
	prep, err := prepareBranch(br.Entries, budget, true)
	if err != nil {
		t.Fatal(err)
	}
	out := piBranch{TokenBudget: budget, TotalTokens: prep.TotalTokens, Messages: piMessages{Count: len(prep.Messages), Items: []piItem{}}}
	out.Collected.Count = prep.EntriesCollected
	for _, m := range prep.Messages {
		ts := session.MessageTimestamp(m)
		out.Messages.Items = append(out.Messages.Items, piItem{Role: m.Role(), Timestamp: &ts, Tokens: session.EstimateTokens(m)})
	}
	out.ReadFiles, out.ModifiedFiles = prep.FileOps.Lists()
	return out
}

// nullSystemContent reports whether entries hold a system message whose
// content is null.
func nullSystemContent(entries []*session.Entry) bool {
	for _, e := range entries {
		if role, err := e.MessageRole(); err != nil || role != session.RoleSystem {
			continue
		}
		if line, err := e.Raw(); err == nil && (bytes.Contains(line, []byte(`"content":null`)) || !bytes.Contains(line, []byte(`"content":`))) {
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
// see (metadata, an entry a context edit hides, the edit itself) and the
// cut point after it starts a turn, pi calls the complete turn before it a
// split turn's prefix; Prime keeps the same first entry but summarizes that
// turn as history. It reports whether it changed want.
func metadataSplit(f *oracleFile, path []*session.Entry, want *piPrepare, prime piPrepare) bool {
	if !want.Compactable || !want.IsSplitTurn || prime.IsSplitTurn || want.FirstKept == nil || prime.FirstKept == nil ||
		want.FirstKept.Index != prime.FirstKept.Index {
		return false
	}
	proj, err := projectPath(path)
	if err != nil {
		return false
	}
	at := slices.IndexFunc(proj.nodes, func(n node) bool { return f.index[n.entry.ID] == want.FirstKept.Index })
	if at < 0 || proj.nodes[at].visible() {
		return false // the model sees the first kept entry
	}
	// The cut point the keep-recent walk chose is the next entry of the
	// projection the model sees.
	next := slices.IndexFunc(proj.nodes[at:], func(n node) bool { return n.visible() })
	if next < 0 || !proj.nodes[at+next].turnStart() {
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
		if bs := p.(*session.BranchSummaryEntry); !bs.FromHook { // an empty summary's files too (issue 21 item 15)
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
