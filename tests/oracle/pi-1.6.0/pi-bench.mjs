#!/usr/bin/env node
// pi-bench (pi 1.6.0): the baseline for performance comparisons against the pi users run
// today, as ../pi-bench.mjs is for 0.80.2. Times what pi 1.6.0 itself does when it opens a
// session and plans a compaction (agent-session.js): SessionManager.open (parse + migrate +
// index), the projection it sends to the LLM (buildSessionProjection) and its token estimate
// (estimateProjectedContextTokens over getBranch), prepareCompaction(getBranch()).
// The session is copied to a temp dir first (pi rewrites legacy files on open).
//
//   node pi-bench.mjs SESSION.jsonl [--keep-recent N] [--reserve N] [--repeat K]
//
// Prints one JSON line: {"file", "bytes", "entries", "openMs", "contextMs", "prepareMs",
// "totalMs" (best of K runs, default 1), "peakRssBytes" (whole process)}.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { performance } from "node:perf_hooks";

const args = process.argv.slice(2);
const file = args.find((a) => !a.startsWith("--") && !/^\d+$/.test(a));
const opt = (name, dflt) => {
	const i = args.indexOf(name);
	return i >= 0 ? Number(args[i + 1]) : dflt;
};
if (!file) {
	console.error("usage: node pi-bench.mjs SESSION.jsonl [--keep-recent N] [--reserve N] [--repeat K]");
	process.exit(2);
}
const home = process.env.PI16_HOME || path.join(os.homedir(), ".cache", "pi-oracle-1.6.0");
const core = path.join(home, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "core");
if (!fs.existsSync(core)) {
	console.error(`pi 1.6.0 is not installed in ${home}; run install.sh`);
	process.exit(2);
}
const load = (rel) => import(pathToFileURL(path.join(core, rel)).href);
const { SessionManager } = await load("session-manager.js");
const { estimateProjectedContextTokens, prepareCompaction } = await load("compaction/compaction.js");

const settings = { enabled: true, reserveTokens: opt("--reserve", 16384), keepRecentTokens: opt("--keep-recent", 20000) };
const repeat = opt("--repeat", 1);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-bench-"));
let best = null;
let entries = 0;
for (let r = 0; r < repeat; r++) {
	const copy = path.join(tmp, `s${r}.jsonl`);
	fs.copyFileSync(file, copy);
	const t0 = performance.now();
	const sm = SessionManager.open(copy, tmp);
	const t1 = performance.now();
	const branch = sm.getBranch();
	estimateProjectedContextTokens(sm.buildSessionProjection(), branch);
	const t2 = performance.now();
	prepareCompaction(branch, settings);
	const t3 = performance.now();
	entries = sm.getEntries().length;
	const run = { openMs: t1 - t0, contextMs: t2 - t1, prepareMs: t3 - t2, totalMs: t3 - t0 };
	if (!best || run.totalMs < best.totalMs) best = run;
	fs.rmSync(copy, { force: true });
}
fs.rmSync(tmp, { recursive: true, force: true });
const round = (x) => Math.round(x * 10) / 10;
console.log(
	JSON.stringify({
		file,
		bytes: fs.statSync(file).size,
		entries,
		openMs: round(best.openMs),
		contextMs: round(best.contextMs),
		prepareMs: round(best.prepareMs),
		totalMs: round(best.totalMs),
		peakRssBytes: process.resourceUsage().maxRSS * 1024,
	}),
);
