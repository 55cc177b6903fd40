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
import { existsSync } from "node:fs";
import { join } from "node:path";
import {
	compactionSettings,
	DEFAULT_RELEASE,
	EXIT_FAILED,
	installDir,
	loadPi,
	nodeFor,
	ORACLE,
	OracleError,
	parseArgs,
	RELEASES,
	sameFile,
	Session,
	usageError,
	withWorkingCopy,
} from "./pi.mjs";
import {
	branchOf,
	completeOf,
	contextOf,
	defaultsOf,
	forkOf,
	prepareOf,
	serializeOf,
	treeOf,
	wireOf,
} from "./answers.mjs";
import { bench, benchRun } from "./bench.mjs";
import { rpcClient } from "./rpcclient.mjs";

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
	if (command === "complete") return completeOf(pi, flags);
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
			case "wire":
				return wireOf(pi, s, flags);
		}
		throw new Error(`unhandled subcommand ${command}`);
	});
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
				const child = spawnSync(node, [...process.execArgv, ORACLE, ...process.argv.slice(2)], {
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
