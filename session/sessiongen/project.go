package sessiongen

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// The conversations are about one fictional project, orbit: a Go service
// that plans satellite passes over ground stations, with a small web UI.
// Every task the user asks for names files of one consistent tree, and the
// tools read, edit and run against contents generated once per session, so
// an edit's oldText is text a read of that file showed.

// module is the project's Go module path.
const module = "github.com/devteam/orbit"

// A task is a piece of work the user asks for, with what the assistant
// finds and does about it. Texts may use the placeholders of [expand].
type task struct {
	title string   // short, for session names and summaries
	asks  []string // first requests, each a complete message
	files []string // the files involved; the first is the main one
	pkg   string   // the package `go test` runs ("" for the web UI)
	test  string   // the test that shows the problem
	sym   string   // the function or component at its heart
	// symptom is the failing test's message; cause and fix are the
	// assistant's diagnosis and change, as clauses.
	symptom, cause, fix string
	patch               string   // a line the fix adds to the main file
	follow              []string // follow-up requests
}

var tasks = []task{
	{
		title: "keep passes that cross midnight UTC",
		asks: []string{
			"The pass planner drops passes that start before midnight UTC and end after it. For Zürich on 2025-11-04 we show 3 ISS passes and heavens-above shows 4. Can you find out why and fix it?",
			"Bug report from Tromsø: the 23:58 pass of NOAA 19 is missing from tomorrow's plan, but it shows up if you ask for a window that starts an hour earlier. Please look into {sym} and fix it properly, with a test.",
		},
		files: []string{"internal/orbit/planner.go", "internal/orbit/planner_test.go"},
		pkg:   "./internal/orbit/", test: "TestPlanPassesAcrossMidnight", sym: "PlanPasses",
		symptom: "got 3 passes, want 4",
		cause:   "{sym} clips the search window to the calendar day before it merges adjacent passes, so a pass from 23:58 to 00:07 is cut in two and the minimum-duration filter drops both halves",
		fix:     "clip to the requested interval instead of the day, and merge before filtering",
		patch:   "\twindow := clipInterval(from, to) // the requested interval, not the calendar day",
		follow: []string{
			"Also add a case for a pass that spans two days in the table test.",
			"Can the error say which station it was planning for? Right now it's just \"no visibility window\".",
		},
	},
	{
		title: "retry TLE downloads with backoff",
		asks: []string{
			"CelesTrak sometimes answers 503 in the morning and the nightly TLE refresh just gives up. Add retries with exponential backoff to the fetcher (at most 3 attempts), and make sure it stops as soon as the context is cancelled.",
			"The nightly job failed again: `fetch tle: unexpected status 503 Service Unavailable`. Please make {sym} retry transient errors with backoff and jitter.",
		},
		files: []string{"internal/tle/fetch.go", "internal/tle/fetch_test.go"},
		pkg:   "./internal/tle/", test: "TestFetchRetriesOn503", sym: "Fetch",
		symptom: "Fetch returned after 1 attempt, want 3",
		cause:   "{sym} returns on the first response that is not 200, without looking at the status",
		fix:     "retry 5xx responses and timeouts up to three times with exponential backoff and jitter, and return ctx.Err() as soon as the context ends",
		patch:   "\tfor attempt := 1; attempt <= maxAttempts; attempt++ {",
		follow: []string{
			"Make the number of attempts configurable through ORBIT_FETCH_ATTEMPTS, default 3.",
			"The backoff should be capped at 30 seconds, otherwise the job overruns its slot.",
		},
	},
	{
		title: "add a --json flag to `orbit passes`",
		asks: []string{
			"I'd like `orbit passes` to print JSON with a --json flag so the home-automation script can read it. One object per pass with start, end, max elevation and the satellite name.",
		},
		files: []string{"cmd/orbit/main.go", "internal/orbit/format.go", "internal/orbit/format_test.go"},
		pkg:   "./internal/orbit/", test: "TestPassesJSON", sym: "writePasses",
		symptom: "output is not valid JSON: invalid character 'P' looking for beginning of value",
		cause:   "the passes command always prints the table, whatever the flags say",
		fix:     "add a --json flag and encode the passes with stable field names (start, end, maxElevation, satellite)",
		patch:   "\tif *jsonOut {\n\t\treturn json.NewEncoder(w).Encode(passes)\n\t}",
		follow: []string{
			"Times in the JSON should be RFC 3339 in UTC, not local time.",
			"Add the station name at the top level, the script needs it.",
		},
	},
	{
		title: "add the passes table migration",
		asks: []string{
			"We need to store computed passes so the web UI doesn't recompute them on every request. Add a migration for a `passes` table (station_id, satellite, start, end, max_elevation) and the store methods to insert and list them.",
		},
		files: []string{"internal/store/migrate.go", "migrations/0003_passes.sql", "internal/store/store.go", "internal/store/store_test.go"},
		pkg:   "./internal/store/", test: "TestMigrateUpDown", sym: "Migrate",
		symptom: "migration 3 down: table passes still exists",
		cause:   "the migration only has an up part, so rolling back leaves the table behind",
		fix:     "write the down migration and run both directions in the test",
		patch:   "\t{Version: 3, Up: passesUp, Down: passesDown},",
		follow: []string{
			"Add an index on (station_id, start); listing by station is the hot path.",
		},
	},
	{
		title: "show pass times in the station's local time",
		asks: []string{
			"In the web UI the pass table shows times in my browser's zone, which is wrong when I look at the São Paulo station from Zürich. Show them in the station's own time zone, with the zone name in the header.",
		},
		files: []string{"web/src/PassTable.tsx", "web/src/api.ts", "web/src/PassTable.test.tsx"},
		test:  "PassTable renders times in the station zone", sym: "PassTable",
		symptom: "Expected: \"23:58\" Received: \"02:58\"",
		cause:   "{sym} formats with toLocaleTimeString(), which uses the browser's zone",
		fix:     "format with Intl.DateTimeFormat and the station's IANA zone from the API",
		patch:   "  const fmt = new Intl.DateTimeFormat(locale, { timeZone: station.timeZone, timeStyle: \"short\" });",
		follow: []string{
			"The <th> for the time column should say \"Start (America/Sao_Paulo)\", with the actual zone.",
		},
	},
	{
		title: "fix the config path on Windows",
		asks: []string{
			"A user on Windows gets this at startup:\n\n    open C:\\Users\\zoë\\AppData\\Roaming/orbit\\config.toml: The system cannot find the path specified.\n\nLooks like we build the path by hand. Can you fix it?",
		},
		files: []string{"internal/config/config.go", "internal/config/config_test.go"},
		pkg:   "./internal/config/", test: "TestConfigPath", sym: "Path",
		symptom: "Path() = \"C:\\\\Users\\\\zoë\\\\AppData\\\\Roaming/orbit\\\\config.toml\", want \"C:\\\\Users\\\\zoë\\\\AppData\\\\Roaming\\\\orbit\\\\config.toml\"",
		cause:   "{sym} concatenates the directory and \"/orbit\" with a forward slash instead of using filepath.Join",
		fix:     "use os.UserConfigDir and filepath.Join",
		patch:   "\treturn filepath.Join(dir, \"orbit\", \"config.toml\"), nil",
		follow: []string{
			"And respect ORBIT_CONFIG if it's set, before anything else.",
		},
	},
	{
		title: "Japanese labels for the pass table",
		asks: []string{
			"Our partner in 東京 wants the pass table in Japanese. Add the labels to the i18n file: 次のパス (next pass), 最大仰角 (max elevation), 開始 / 終了 (start / end). The component must not hard-code any of them.",
		},
		files: []string{"web/src/i18n/ja.json", "web/src/PassTable.tsx"},
		test:  "PassTable uses the ja labels", sym: "PassTable",
		symptom: "missing translation key \"passTable.maxElevation\" for locale ja",
		cause:   "the keys exist in en.json but not in ja.json, so the lookup falls back to the key",
		fix:     "add the four keys to ja.json and read them through t() in {sym}",
		patch:   "  \"passTable.maxElevation\": \"最大仰角\",",
		follow: []string{
			"Use 「」 quotes in the Japanese tooltip, not \"\".",
		},
	},
	{
		title: "validate station coordinates in POST /stations",
		asks: []string{
			"POST /stations accepts a latitude of 123 and then the planner panics later. Validate the coordinates in the handler and answer 400 with a JSON error that says which field is wrong.",
		},
		files: []string{"internal/api/handler.go", "internal/api/handler_test.go"},
		pkg:   "./internal/api/", test: "TestCreateStationRejectsBadLatitude", sym: "createStation",
		symptom: "status = 201, want 400",
		cause:   "{sym} only checks that the name is not empty",
		fix:     "reject a latitude outside [-90, 90] and a longitude outside [-180, 180] with 400 and {\"error\": \"latitude out of range\"}",
		patch:   "\tif req.Lat < -90 || req.Lat > 90 {\n\t\twriteError(w, http.StatusBadRequest, \"latitude out of range\")\n\t\treturn\n\t}",
		follow: []string{
			"Altitude can be negative (Dead Sea station), don't reject that.",
		},
	},
	{
		title: "add tracing spans around the planner",
		asks: []string{
			"Planning takes 4 seconds for some stations and I can't tell where. Add an OpenTelemetry span around {sym} with the station and satellite as attributes, and one per propagation step batch.",
		},
		files: []string{"internal/orbit/planner.go", "internal/telemetry/trace.go", "internal/orbit/planner_test.go"},
		pkg:   "./internal/orbit/", test: "TestPlanPassesSpan", sym: "PlanPasses",
		symptom: "got 0 spans, want 1",
		cause:   "the planner never receives the tracer: main builds it but does not pass it down",
		fix:     "start a span in {sym} from the tracer in the Planner struct, with station.id and satellite.name attributes",
		patch:   "\tctx, span := p.tracer.Start(ctx, \"PlanPasses\", trace.WithAttributes(attribute.String(\"station.id\", st.ID)))\n\tdefer span.End()",
		follow: []string{
			"Don't add spans inside the inner loop, that's millions of them.",
		},
	},
	{
		title: "speed up ephemeris propagation",
		asks: []string{
			"Propagation is the hot path: BenchmarkPropagate shows about 1,000 allocations per call. See if you can get that down without changing results.",
		},
		files: []string{"internal/orbit/ephemeris.go", "internal/orbit/ephemeris_test.go"},
		pkg:   "./internal/orbit/", test: "TestPropagateMatchesReference", sym: "Propagate",
		symptom: "position drift 1.3e-06 km at step 418, tolerance 1e-09",
		cause:   "{sym} allocates a new state vector per step, and the last refactor reordered a floating-point sum",
		fix:     "reuse one preallocated buffer and keep the original summation order",
		patch:   "\tbuf := p.buf[:0] // reused between steps",
		follow: []string{
			"Run the benchmark with -count 10 and compare with benchstat before and after.",
		},
	},
	{
		title: "fix the flaky TestStoreConcurrentWrites",
		asks: []string{
			"TestStoreConcurrentWrites fails about one run in twenty on CI with `database is locked (SQLITE_BUSY)`. Please fix the cause rather than adding a retry to the test.",
		},
		files: []string{"internal/store/store.go", "internal/store/store_test.go"},
		pkg:   "./internal/store/", test: "TestStoreConcurrentWrites", sym: "Open",
		symptom: "insert pass: database is locked (SQLITE_BUSY)",
		cause:   "each goroutine opens its own connection and none sets a busy timeout",
		fix:     "share one *sql.DB, set _busy_timeout=5000 and SetMaxOpenConns(1) for writers",
		patch:   "\tdb.SetMaxOpenConns(1) // SQLite has one writer",
		follow: []string{
			"Run it with -race -count 200 to be sure.",
		},
	},
	{
		title: "respect the station's elevation mask",
		asks: []string{
			"Passes that never get above the station's elevation mask still show up: Kraków has a 10° mask because of the buildings, and we list a pass at 4.2°. {sym} should drop them.",
		},
		files: []string{"internal/orbit/planner.go", "internal/orbit/planner_test.go"},
		pkg:   "./internal/orbit/", test: "TestPlanPassesElevationMask", sym: "PlanPasses",
		symptom: "pass at 4.2° max elevation included, mask is 10°",
		cause:   "the mask is compared with the elevation at rise time, which is always 0°, instead of the maximum",
		fix:     "compare the pass's maximum elevation with station.MaskDeg",
		patch:   "\tif pass.MaxElevation < st.MaskDeg {\n\t\tcontinue\n\t}",
		follow: []string{
			"The mask can depend on the azimuth for some stations; keep that in mind but don't build it yet.",
		},
	},
	{
		title: "add a /healthz endpoint",
		asks: []string{
			"The load balancer needs a health check. Add GET /healthz that returns 200 with {\"status\":\"ok\"} when the database answers a ping, and 503 otherwise.",
		},
		files: []string{"internal/api/routes.go", "internal/api/handler.go", "internal/api/handler_test.go"},
		pkg:   "./internal/api/", test: "TestHealthz", sym: "healthz",
		symptom: "status = 404, want 200",
		cause:   "the route is not registered",
		fix:     "register GET /healthz and ping the database with a one-second timeout",
		patch:   "\tmux.HandleFunc(\"GET /healthz\", s.healthz)",
		follow: []string{
			"Keep it out of the access log, it's called every two seconds.",
		},
	},
	{
		title: "cache TLEs on disk for six hours",
		asks: []string{
			"We hit CelesTrak far too often during development. Cache the TLE files on disk (under the user cache dir) and reuse them for six hours unless --refresh is given.",
		},
		files: []string{"internal/tle/cache.go", "internal/tle/fetch.go", "internal/tle/cache_test.go"},
		pkg:   "./internal/tle/", test: "TestCacheExpires", sym: "Cached",
		symptom: "fetches = 1, want 2 after 6h1m",
		cause:   "the cache compares the file's modification time with time.Now() from the real clock, not the injected one",
		fix:     "take the clock from the Fetcher and compare mtime + TTL with it",
		patch:   "\tif f.now().Sub(info.ModTime()) < f.ttl {",
		follow: []string{
			"Write the cache file atomically, a crash mid-write left a truncated file last time.",
		},
	},
	{
		title: "run the web tests in CI",
		asks: []string{
			"CI only runs the Go tests. Add a job for the web UI (npm ci, npm test) and make `make check` run both locally.",
		},
		files: []string{".github/workflows/ci.yml", "Makefile", "web/package.json"},
		test:  "web tests in CI", sym: "check",
		symptom: "npm ERR! Missing script: \"test\"",
		cause:   "web/package.json has no test script, only lint and build",
		fix:     "add \"test\": \"vitest run\" to package.json and a web job to the workflow",
		patch:   "check: vet test web-test",
		follow: []string{
			"Cache ~/.npm in the workflow, installs take two minutes.",
		},
	},
	{
		title: "rename Station.Alt to AltitudeMeters",
		asks: []string{
			"`Station.Alt` confuses everyone (kilometres? feet?). Rename it to AltitudeMeters everywhere, but the JSON field must stay \"alt\" so existing clients keep working.",
		},
		files: []string{"internal/orbit/station.go", "internal/api/handler.go", "internal/store/store.go"},
		pkg:   "./...", test: "TestStationJSONRoundTrip", sym: "Station",
		symptom: "json: unknown field \"altitudeMeters\"",
		cause:   "the struct tag was renamed together with the field",
		fix:     "rename the field but keep the tag `json:\"alt\"`",
		patch:   "\tAltitudeMeters float64 `json:\"alt\"` // metres above the WGS84 ellipsoid",
		follow: []string{
			"Update docs/api.md too, it still says the unit is unspecified.",
		},
	},
	{
		title: "document the HTTP API",
		asks: []string{
			"Write docs/api.md describing every endpoint (method, path, request and response JSON, errors) from what the handlers actually do, and link it from the README.",
		},
		files: []string{"docs/api.md", "README.md", "internal/api/routes.go"},
		pkg:   "./internal/api/", test: "TestRoutesDocumented", sym: "routes",
		symptom: "route GET /stations/{id}/passes is not in docs/api.md",
		cause:   "the list of routes in the doc was copied from an old version",
		fix:     "generate the route table from routes.go and check it in a test",
		patch:   "| GET | /stations/{id}/passes | passes of one station, ?from=&to= in RFC 3339 |",
		follow: []string{
			"Add curl examples, people copy them.",
		},
	},
}

// constraints are rule-like sentences a user adds to requests.
var constraints = []string{
	"Don't touch the public API in internal/api, other teams depend on it.",
	"Always run go test ./... before you commit.",
	"Never commit anything under web/dist.",
	"Keep error messages lowercase, without trailing punctuation.",
	"Prefer table-driven tests.",
	"Don't add new dependencies without asking me first.",
	"Use log/slog for logging, never fmt.Println.",
	"Keep the JSON field names stable: the mobile app parses them.",
	"Make sure every migration can be rolled back.",
	"Never log the API token, not even at debug level.",
	"Always use UTC internally and convert to local time only in the web UI.",
	"Avoid global state; pass the clock in.",
	"Keep commits small, one logical change each.",
	"The Japanese labels must stay in web/src/i18n/ja.json, don't hard-code 日本語 strings in components.",
}

// stations and satellites give the prompts and test data their names.
var (
	stations   = []string{"Zürich", "São Paulo", "Kraków", "東京", "Reykjavík", "Tromsø", "Montréal", "Nuuk"}
	satellites = []string{"ISS (ZARYA)", "NOAA 19", "天宮 (Tiangong)", "SENTINEL-2B", "METEOR-M 2", "HUBBLE"}
)

// A projectFile is one file of the tree with its generated contents.
type projectFile struct {
	path  string
	lines []string
	text  string // lines joined, with a final newline
}

// newProject generates the contents of every file the tasks name.
func newProject(rng *rand.Rand, scale float64) map[string]*projectFile {
	files := make(map[string]*projectFile)
	syms := make(map[string][]string)
	for _, t := range tasks {
		if !slices.Contains(syms[t.files[0]], t.sym) {
			syms[t.files[0]] = append(syms[t.files[0]], t.sym)
		}
	}
	for _, t := range tasks {
		for _, p := range t.files {
			if files[p] != nil {
				continue
			}
			lines := fileLines(rng, p, syms[p], t, scale)
			files[p] = &projectFile{path: p, lines: lines, text: strings.Join(lines, "\n") + "\n"}
		}
	}
	return files
}

// fileLines writes plausible contents for path, by its kind.
func fileLines(rng *rand.Rand, path string, syms []string, t task, scale float64) []string {
	n := max(3, int(float64(50+rng.IntN(150))*scale))
	var out []string
	pick := func(list []string) string { return list[rng.IntN(len(list))] }
	dir := path[:max(0, strings.LastIndexByte(path, '/'))]
	pkg := dir[strings.LastIndexByte(dir, '/')+1:]
	switch {
	case strings.HasSuffix(path, "_test.go"):
		out = append(out, "package "+pkg, "", "import (", "\t\"testing\"", "\t\"time\"", ")", "")
		for len(out) < n {
			name := t.test
			if len(out) > 10 {
				name = "Test" + pick([]string{"Parse", "Window", "Merge", "Round", "Encode", "Load"}) + pick([]string{"Empty", "Boundary", "Unicode", "Large", "Error"})
			}
			if strings.HasPrefix(name, "Test") {
				out = append(out, "func "+name+"(t *testing.T) {")
			} else {
				out = append(out, "func TestCase"+fmt.Sprint(len(out))+"(t *testing.T) {")
			}
			out = append(out, "\ttests := []struct {", "\t\tname string", "\t\tstation string", "\t\twant int", "\t}{")
			for range 2 + rng.IntN(4) {
				out = append(out, fmt.Sprintf("\t\t{%q, %q, %d},", pick([]string{"empty window", "one pass", "across midnight", "below mask", "polar orbit"}), pick(stations), rng.IntN(6)))
			}
			out = append(out, "\t}", "\tfor _, tt := range tests {", "\t\tt.Run(tt.name, func(t *testing.T) {",
				"\t\t\tgot := len(plan(t, tt.station, time.Date(2025, 11, 4, 0, 0, 0, 0, time.UTC)))",
				"\t\t\tif got != tt.want {", "\t\t\t\tt.Errorf(\"got %d passes, want %d\", got, tt.want)", "\t\t\t}", "\t\t})", "\t}", "}", "")
		}
	case strings.HasSuffix(path, ".go"):
		out = append(out, "// Package "+pkg+" is part of orbit, the satellite pass planner.", "package "+pkg, "", "import (",
			"\t\"context\"", "\t\"errors\"", "\t\"fmt\"", "\t\"time\"", ")", "")
		syms = append(syms, "helper"+fmt.Sprint(rng.IntN(9)))
		for i := 0; len(out) < n; i++ {
			sym := syms[i%len(syms)]
			if i >= len(syms) {
				sym = pick([]string{"normalize", "clipInterval", "mergeAdjacent", "validate", "parseEpoch", "newBuffer"}) + fmt.Sprint(i)
			}
			out = append(out, fmt.Sprintf("// %s %s.", sym, pick([]string{"returns the passes of one station in a time window", "checks its input and reports the first problem", "keeps the state between propagation steps", "reads the settings it needs from the environment"})),
				fmt.Sprintf("func %s(ctx context.Context, st Station, from, to time.Time) ([]Pass, error) {", sym),
				"\tif !from.Before(to) {", fmt.Sprintf("\t\treturn nil, fmt.Errorf(\"%s: empty window %%s..%%s\", from, to)", strings.ToLower(sym)), "\t}")
			prev := ""
			for range 2 + rng.IntN(8) {
				if l := pick(goLines); l != prev {
					out = append(out, l)
					prev = l
				}
			}
			out = append(out, "\treturn passes, nil", "}", "")
		}
		if strings.Contains(path, "tle") {
			out = append(out, "var line1 = regexp.MustCompile(`^1 (\\d{5})[UCS] `)", "")
		}
	case strings.HasSuffix(path, ".tsx"):
		out = append(out, "import { useMemo } from \"react\";", "import { t } from \"./i18n\";", "", "export function PassTable({ passes, station }: Props) {",
			"  const rows = useMemo(() => passes.filter((p) => p.maxElevation >= station.maskDeg), [passes, station]);", "  return (", "    <table className=\"passes\">",
			"      <thead>", "        <tr>", "          <th>{t(\"passTable.start\")}</th>", "          <th>{t(\"passTable.end\")}</th>", "          <th>{t(\"passTable.maxElevation\")}</th>", "        </tr>", "      </thead>", "      <tbody>")
		for len(out) < n-6 {
			out = append(out, "        {rows.map((p) => (", "          <tr key={p.id}>", "            <td>{fmt.format(new Date(p.start))}</td>", fmt.Sprintf("            <td title=\"%s\">{p.satellite}</td>", pick(satellites)), "          </tr>", "        ))}")
		}
		out = append(out, "      </tbody>", "    </table>", "  );", "}")
	case strings.HasSuffix(path, ".ts"):
		out = append(out, "export interface Pass {", "  id: string;", "  satellite: string;", "  start: string; // RFC 3339, UTC", "  end: string;", "  maxElevation: number;", "}", "")
		for len(out) < n {
			ep := pick([]string{"stations", "passes", "healthz", "stations/${id}/passes"})
			out = append(out, fmt.Sprintf("export async function get%s(id: string): Promise<Pass[]> {", strings.ToUpper(ep[:1])+strings.Map(func(r rune) rune {
				if r == '/' || r == '$' || r == '{' || r == '}' {
					return -1
				}
				return r
			}, ep[1:])), fmt.Sprintf("  const res = await fetch(`/api/%s`);", ep), "  if (!res.ok) throw new Error(`orbit api: ${res.status}`);", "  return res.json();", "}", "")
		}
	case strings.HasSuffix(path, ".json"):
		out = append(out, "{", "  \"passTable.start\": \"開始\",", "  \"passTable.end\": \"終了\",", "  \"passTable.next\": \"次のパス\",", "  \"station.name\": \"地上局\",", "  \"satellite.name\": \"衛星\",", "  \"error.network\": \"ネットワークエラー 😢\"", "}")
	case strings.HasSuffix(path, ".sql"):
		out = append(out, "-- +migrate Up", "CREATE TABLE passes (", "    id INTEGER PRIMARY KEY,", "    station_id INTEGER NOT NULL REFERENCES stations(id),", "    satellite TEXT NOT NULL,", "    start TIMESTAMP NOT NULL,", "    \"end\" TIMESTAMP NOT NULL,", "    max_elevation REAL NOT NULL", ");", "", "-- +migrate Down")
	case strings.HasSuffix(path, ".md"):
		out = append(out, "# orbit", "", "orbit plans satellite passes over ground stations: when a satellite rises, how high it gets, when it sets.", "")
		for len(out) < n {
			out = append(out, pick(docLines), "")
		}
	case strings.HasSuffix(path, ".yml"):
		out = append(out, "name: ci", "on: [push, pull_request]", "jobs:", "  go:", "    runs-on: ubuntu-latest", "    steps:", "      - uses: actions/checkout@v4", "      - uses: actions/setup-go@v5", "        with:", "          go-version: \"1.25\"", "      - run: go vet ./...", "      - run: go test -race ./...")
	case path == "Makefile":
		out = append(out, "GO ?= go", "", ".PHONY: build test vet check", "", "build:", "\t$(GO) build -o bin/orbit ./cmd/orbit", "", "test:", "\t$(GO) test ./...", "", "vet:", "\t$(GO) vet ./...", "", "check: vet test")
	default:
		out = append(out, "{", "  \"name\": \"orbit-web\",", "  \"private\": true,", "  \"scripts\": {", "    \"build\": \"vite build\",", "    \"lint\": \"eslint src\"", "  }", "}")
	}
	return out
}

var goLines = []string{
	"\tpasses := make([]Pass, 0, 8)",
	"\tstep := 10 * time.Second",
	"\tfor t := from; t.Before(to); t = t.Add(step) {",
	"\t}",
	"\tel, az := look(st, sat.Position(t))",
	"\tif el < 0 {\n\t\tcontinue\n\t}",
	"\tif err := ctx.Err(); err != nil {\n\t\treturn nil, err\n\t}",
	"\tif errors.Is(err, ErrNoWindow) {\n\t\treturn nil, fmt.Errorf(\"station %s: %w\", st.Name, err)\n\t}",
	"\tpasses = mergeAdjacent(passes, 2*time.Minute)",
	"\tslog.Debug(\"planned\", \"station\", st.Name, \"passes\", len(passes))",
	"\tdeadline, ok := ctx.Deadline()",
	"\t_ = az // azimuth is reported, not filtered on",
	"\tday := from.Truncate(24 * time.Hour)",
	"\tresp, err := c.http.Do(req)",
	"\tdefer resp.Body.Close()",
	"\tif resp.StatusCode != http.StatusOK {\n\t\treturn nil, fmt.Errorf(\"fetch tle: unexpected status %s\", resp.Status)\n\t}",
	"\tmaxEl := math.Max(maxEl, el)",
	"\tname := strings.TrimSpace(st.Name) // may be \"São Paulo\" or \"東京\"",
}

var docLines = []string{
	"Run `make check` before sending a change; CI runs the same targets.",
	"Times are stored and computed in UTC; the web UI converts them to the station's zone.",
	"TLEs come from CelesTrak and are cached for six hours under the user cache directory.",
	"A station has a name, a position (latitude, longitude, altitude in metres) and an elevation mask in degrees.",
	"`orbit passes --station Zürich --from 2025-11-04` prints the passes of the next 24 hours.",
	"The HTTP API listens on :8080; see docs/api.md for the endpoints.",
	"Passes below the station's elevation mask are not listed.",
}
