#!/usr/bin/env node
// Session Studio's addition: pi's own automatic-compaction check, run for real.
//
//   node threshold-check.mjs SESSION.jsonl --pi 0.80.2|1.6.0 --context-window N --reserve N [--same-model] [--max-tokens N] [--omit-out FILE]
//   node threshold-check.mjs --batch --pi 0.80.2|1.6.0 < JOBS.json
//
// --batch: many checks in one process (importing pi's modules is most of a single check's time):
// JOBS.json is a JSON array, each job the single form's arguments without --pi; prints a JSON array
// of the single form's answers, in order. Each check opens its own copy, as a single run does.
// --same-model: pi runs the last answer's own model (its provider and id, this window, the output
// limit --max-tokens, 0 when not given), so the overflow cases come first, as for a session pi
// resumes on that model: the check then answers "overflow" where pi takes the answer for a context
// overflow or (pi 1.6.0) for a recoverable length stop.
// --omit-out FILE (1.6.0): where the check retries for an overflow, pi's own _omitRecoveryAttempt
// (taken out word for word) appends its context edits to the session's copy, written to FILE.
//
// Opens the session as pi does (SessionManager.open on a copy), sets the agent's messages as pi
// does when it loads a session (0.80.2: buildSessionContext().messages; 1.6.0: the projection's
// messages) and calls pi's own AgentSession._checkCompaction(lastAssistant, false), the
// pre-prompt check, on a stand-in `this` that holds only what the check reads: the session
// manager, the agent's messages, a model with the given context window (unless --same-model, not the answer's, so the
// overflow cases are skipped: the threshold case alone) and the compaction settings (enabled, the
// given reserve), and (1.6.0) pi's own _findPersistedMessageEntryId, taken out word for word as the
// check is. _runAutoCompaction is replaced by a recorder: the check's decision is what it
// asks for. Prints {"lastAssistant": bool, "compacts": null | "threshold" | "overflow"}.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

const args = process.argv.slice(2);
const option = (argv, name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const version = option(args, "--pi", "0.80.2");
const batch = args.includes("--batch");
// the options that take no value (the session is the argument that follows none of the others)
const FLAGS = ["--same-model", "--batch"];
// one check's arguments: the session and its options (all but --pi and --batch)
function parseJob(argv) {
	return {
		file: argv.find(
			(a, i) => !a.startsWith("--") && !(i > 0 && argv[i - 1].startsWith("--") && !FLAGS.includes(argv[i - 1])),
		),
		contextWindow: Number(option(argv, "--context-window", "200000")),
		reserveTokens: Number(option(argv, "--reserve", "16384")),
		sameModel: argv.includes("--same-model"),
		maxTokens: Number(option(argv, "--max-tokens", "0")),
		omitOut: option(argv, "--omit-out", undefined),
	};
}
if ((!batch && !parseJob(args).file) || !["0.80.2", "1.6.0"].includes(version)) {
	console.error(
		"usage: node threshold-check.mjs SESSION.jsonl --pi 0.80.2|1.6.0 --context-window N --reserve N\n" +
			"       node threshold-check.mjs --batch --pi 0.80.2|1.6.0 < JOBS.json",
	);
	process.exit(2);
}
const home =
	version === "1.6.0"
		? process.env.PI16_HOME || path.join(os.homedir(), ".cache", "pi-oracle-1.6.0")
		: process.env.PI_ORACLE_HOME || path.join(os.homedir(), ".cache", "pi-oracle-0.80.2");
const core = path.join(home, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "core");
const load = (rel) => import(pathToFileURL(path.join(core, rel)).href);

// agent-session.js cannot be imported on node 20 (pi 1.6.0's undici needs node 22's zstd), so pi's
// _checkCompaction (and 1.6.0's _findPersistedMessageEntryId, which it calls) are taken out of it
// word for word into a sibling module, beside the imports they read (as pi-oracle.mjs exposes
// findProjectedCutPoint); nothing in them is changed.
function methodSource(source, head, name) {
	const start = source.indexOf(head);
	if (start < 0) return null;
	let depth = 0;
	let end = source.indexOf("{", start);
	for (; end < source.length; end++) {
		if (source[end] === "{") depth++;
		else if (source[end] === "}" && --depth === 0) break;
	}
	return source.slice(start, end + 1).replace(head.trim(), head.trim().replace(/^(async )?_\w+\(/, `export $1function ${name}(`));
}
function checkCompactionModule() {
	const source = fs.readFileSync(path.join(core, "agent-session.js"), "utf8");
	const check = methodSource(source, "    async _checkCompaction(assistantMessage, skipAbortedCheck = true) {", "checkCompaction");
	if (check === null) throw new Error("_checkCompaction not found in agent-session.js");
	const find = methodSource(source, "    _findPersistedMessageEntryId(message) {", "findPersistedMessageEntryId");
	const omit = methodSource(source, "    _omitRecoveryAttempt(message) {", "omitRecoveryAttempt");
	const text = [
		'import * as compaction from "./compaction/index.js";',
		'import { getLatestCompactionEntry } from "./session-manager.js";',
		'import * as ai from "@earendil-works/pi-ai/compat";',
		"const { calculateContextTokens, estimateContextTokens, estimateProjectedContextTokens, shouldCompact } = compaction;",
		"const { isContextOverflow, isRecoverableLength } = ai;",
		check,
		find ?? "export const findPersistedMessageEntryId = undefined;",
		omit ?? "export const omitRecoveryAttempt = undefined;",
		"",
	].join("\n");
	const file = path.join(core, "agent-session.threshold-oracle.js");
	if (!fs.existsSync(file) || fs.readFileSync(file, "utf8") !== text) {
		// written whole under another name, then renamed: a second process never imports half of it
		const partial = `${file}.${process.pid}.tmp`;
		fs.writeFileSync(partial, text);
		fs.renameSync(partial, file);
	}
	return "agent-session.threshold-oracle.js";
}

const [{ SessionManager }, { checkCompaction, findPersistedMessageEntryId, omitRecoveryAttempt }] = await Promise.all([
	load("session-manager.js"),
	load(checkCompactionModule()),
]);

async function checkOne({ file, contextWindow, reserveTokens, sameModel, maxTokens, omitOut }) {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-threshold-"));
	const work = path.join(dir, path.basename(file));
	fs.copyFileSync(file, work);
	try {
		const manager = SessionManager.open(work, dir);
		const messages =
			version === "1.6.0" ? manager.buildSessionProjection().messages : manager.buildSessionContext().messages;
		const findLast = () => {
			for (let i = messages.length - 1; i >= 0; i--) if (messages[i].role === "assistant") return messages[i];
			return undefined;
		};
		let compacts = null;
		const self = {
			sessionManager: manager,
			agent: { state: { messages } },
			settingsManager: { getCompactionSettings: () => ({ enabled: true, reserveTokens, keepRecentTokens: 20000 }) },
			_entryIdsByMessage: new Map(),
			_overflowRecoveryAttempted: false,
			_emit() {},
			async _emitSessionCompactFailed() {},
			// --omit-out: pi 1.6.0's own omission of the failed attempt, appended to the copy
			_omitRecoveryAttempt: omitOut && omitRecoveryAttempt ? omitRecoveryAttempt : () => {},
			_refreshFinalizedContext() {},
			async _runAutoCompaction(reason) {
				compacts = reason;
				return false;
			},
			// 1.6.0: the message's entry (on the branch, or the projection's source entry of an edited copy)
			_findPersistedMessageEntryId: findPersistedMessageEntryId,
			_modelForMessage(message) {
				return this.model?.provider === message.provider && this.model.id === message.model ? this.model : undefined;
			},
		};
		const last = findLast();
		if (last) {
			// another model than the answer's: pi skips the overflow cases (an answer's error, not the
			// context's size) and weighs the context against this window, the threshold case alone
			self.model = sameModel
				? { provider: last.provider, id: last.model, contextWindow, maxTokens }
				: { provider: "session-studio", id: "threshold-check", contextWindow, maxTokens };
			await checkCompaction.call(self, last, false);
		}
		if (omitOut) fs.copyFileSync(work, omitOut);
		return { lastAssistant: Boolean(last), compacts };
	} finally {
		fs.rmSync(dir, { recursive: true, force: true });
	}
}

if (batch) {
	// --batch: a JSON array of jobs on stdin, each one check's arguments as the single form takes
	// them (["SESSION.jsonl", "--context-window", "N", ...]); prints a JSON array of the answers.
	// pi's modules are imported once for all (a single check spends most of its time on that).
	const jobs = JSON.parse(fs.readFileSync(0, "utf8"));
	const answers = [];
	for (const job of jobs) answers.push(await checkOne(parseJob(job)));
	process.stdout.write(`${JSON.stringify(answers)}\n`);
} else {
	process.stdout.write(`${JSON.stringify(await checkOne(parseJob(args)))}\n`);
}
