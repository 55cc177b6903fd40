// The answers of the subcommands that read a session: context, prepare,
// serialize, branch, tree, fork, wire, complete and defaults.

import { existsSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import {
	countRoles,
	DEFAULT_BRANCH_CONTEXT_WINDOW,
	describeMessages,
	estimateJSON,
	installDir,
	intFlag,
	OracleError,
	usageError,
} from "./pi.mjs";

// ---------------------------------------------------------------------------
// Subcommands

export function contextOf(pi, s) {
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

// wireOf converts the context at the leaf as pi 1.6 does before a request
// (convertToLlm, then the provider's own message conversion from pi-ai) and
// returns what the request would carry: Responses "input" items, or Gemini
// "contents" with the system instruction.
export async function wireOf(pi, s, flags) {
	if (pi.label !== "1.6") throw usageError("wire: pi 1.6 only");
	let model;
	try {
		model = JSON.parse(flags.model ?? "");
	} catch {
		throw usageError("wire: --model must be a JSON object");
	}
	model = { input: ["text"], reasoning: false, compat: undefined, ...model, api: flags.api ?? model.api };
	const context = s.sm.buildSessionContext();
	const messages = pi.convertToLlm(context.messages);
	const ai = pathToFileURL(join(installDir(), "node_modules", "@earendil-works", "pi-ai", "dist") + "/");
	if (flags.payload) return { ...s.summary(), payload: await payloadOf(ai, model, messages, flags.reasoning) };
	switch (model.api) {
		case "openai-responses":
		case "azure-openai-responses": {
			const { convertResponsesMessages } = await import(new URL("api/openai-responses-shared.js", ai).href);
			const input = convertResponsesMessages(model, { messages }, new Set(["openai", "openai-codex", "opencode"]), {});
			return { ...s.summary(), input: JSON.parse(JSON.stringify(input)) };
		}
		case "google-generative-ai":
		case "google-vertex": {
			const { convertMessages } = await import(new URL("api/google-shared.js", ai).href);
			const system = pi.getCurrentSystemMessage(messages);
			return {
				...s.summary(),
				systemInstruction: system === undefined ? null : pi.getSystemMessageText(system),
				contents: JSON.parse(JSON.stringify(convertMessages(model, { messages }))),
			};
		}
	}
	throw usageError(`wire: --api ${JSON.stringify(model.api)} is not one the oracle converts`);
}

// completeOf streams one turn with pi-ai from the server the model names
// and returns the final assistant message, as pi stores it.
export async function completeOf(pi, flags) {
	if (pi.label !== "1.6") throw usageError("complete: pi 1.6 only");
	let model;
	try {
		model = JSON.parse(flags.model ?? "");
	} catch {
		throw usageError("complete: --model must be a JSON object");
	}
	model = { input: ["text"], reasoning: false, contextWindow: 200000, maxTokens: 32000,
		cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, ...model, api: flags.api ?? model.api };
	const modules = {
		"anthropic-messages": "api/anthropic-messages.js",
		"openai-responses": "api/openai-responses.js",
		"azure-openai-responses": "api/azure-openai-responses.js",
		"google-generative-ai": "api/google-generative-ai.js",
	};
	if (!(model.api in modules)) throw usageError(`complete: --api ${JSON.stringify(model.api)} is not one the oracle runs`);
	const ai = pathToFileURL(join(installDir(), "node_modules", "@earendil-works", "pi-ai", "dist") + "/");
	const { streamSimple } = await import(new URL(modules[model.api], ai).href);
	const messages = [{ role: "user", content: [{ type: "text", text: flags.prompt ?? "go" }], timestamp: 1 }];
	const events = streamSimple(model, { messages }, { apiKey: flags.key ?? "sk-pioracle", reasoning: flags.reasoning });
	let final;
	for await (const ev of events) {
		if (ev.type === "done") final = ev.message;
		if (ev.type === "error") final = ev.error;
	}
	if (final === undefined) throw new OracleError("complete: the stream ended without a message");
	return { message: JSON.parse(JSON.stringify(final)) };
}

// payloadOf runs the API's streamSimple on the messages with an onPayload
// hook that keeps the request body and stops the request before it is sent.
async function payloadOf(ai, model, messages, reasoning) {
	const modules = {
		"anthropic-messages": "api/anthropic-messages.js",
		"openai-responses": "api/openai-responses.js",
		"azure-openai-responses": "api/azure-openai-responses.js",
	};
	if (!(model.api in modules)) throw usageError(`wire --payload: --api ${JSON.stringify(model.api)} is not one the oracle runs`);
	const { streamSimple } = await import(new URL(modules[model.api], ai).href);
	model = { baseUrl: "http://127.0.0.1:9", contextWindow: 200000, maxTokens: 32000, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, ...model };
	let payload;
	const stop = new Error("pioracle: payload captured");
	const events = streamSimple(model, { messages }, {
		apiKey: "sk-pioracle",
		reasoning,
		onPayload: (p) => {
			payload = p;
			throw stop;
		},
	});
	for await (const ev of events) {
		if (ev.type === "error" || ev.type === "done") break;
	}
	if (payload === undefined) throw new OracleError("wire --payload: pi sent no request");
	return JSON.parse(JSON.stringify(payload));
}

export function prepareOf(pi, s, settings) {
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

export function serializeOf(pi, s, settings) {
	const prep = pi.prepareCompaction(s.sm.getBranch(), settings);
	if (!prep) return { ...s.summary(), compactable: false };
	const history = pi.serializeConversation(pi.convertToLlm(prep.messagesToSummarize));
	const turnPrefix = pi.serializeConversation(pi.convertToLlm(prep.turnPrefixMessages));
	return { ...s.summary(), compactable: true, isSplitTurn: prep.isSplitTurn, history, turnPrefix };
}

export function branchOf(pi, s, flags) {
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
export function forkOf(s) {
	const before = s.summary();
	const file = s.sm.createBranchedSession(before.leafId);
	return {
		...before,
		header: s.sm.getHeader(),
		lines: s.sm.getEntries().map((e) => JSON.stringify(e)),
		written: file !== undefined && existsSync(file),
	};
}

export function treeOf(s) {
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

export function defaultsOf(pi) {
	return {
		pi: pi.version,
		node: process.version,
		compaction: pi.compactionDefaults,
		settings: pi.settingsDefaults,
		branchContextWindowFallback: DEFAULT_BRANCH_CONTEXT_WINDOW,
	};
}
