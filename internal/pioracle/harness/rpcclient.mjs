// The rpc-client subcommand: an agent binary driven by pi's own RpcClient.

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { installDir, RELEASES, usageError } from "./pi.mjs";

// ---------------------------------------------------------------------------
// rpc-client

// rpcClient drives the agent binary bin in RPC mode with pi 1.6's own
// RpcClient (dist/modes/rpc/rpc-client.js, the client pi ships for programs
// that embed it) through a fixed conversation, and reports what each call
// returned or threw. RpcClient starts "node CLI --mode rpc ..."; CLI is a
// small script here that runs bin with those arguments instead, passing
// signals on. Only that module and its line reader are imported, so any
// node runs it.
export async function rpcClient(label, bin, flags) {
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
