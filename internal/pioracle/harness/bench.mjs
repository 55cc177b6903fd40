// The bench subcommand: pi's speed and memory on a session file.

import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { basename } from "node:path";
import {
	compactionSettings,
	intFlag,
	loadPi,
	nodeFor,
	ORACLE,
	OracleError,
	withWorkingCopy,
} from "./pi.mjs";

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
export async function benchRun(label, file, flags) {
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
	const args = ["--expose-gc", ORACLE, "--pi", label, "bench-run", file, "--runs", String(runs)];
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

export function bench(labels, file, flags) {
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
