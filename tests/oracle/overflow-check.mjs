#!/usr/bin/env node
// Session Studio's addition: pi's own isContextOverflow (pi-ai's utils/overflow.js) of pi 0.80.2
// and of pi 1.6.0, for the differential test of core/overflow.py.
//
//   node overflow-check.mjs < cases.jsonl
//
// Each input line is {"message": {...}, "contextWindow": N}; each output line is
// {"0.80.2": bool | "throws", "1.6.0": bool | "throws"}, in the same order.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

const homes = {
	"0.80.2": process.env.PI_ORACLE_HOME || path.join(os.homedir(), ".cache", "pi-oracle-0.80.2"),
	"1.6.0": process.env.PI16_HOME || path.join(os.homedir(), ".cache", "pi-oracle-1.6.0"),
};
const checks = {};
for (const [version, home] of Object.entries(homes)) {
	const file = path.join(home, "node_modules", "@earendil-works", "pi-ai", "dist", "utils", "overflow.js");
	checks[version] = (await import(pathToFileURL(file).href)).isContextOverflow;
}
const out = [];
for (const line of fs.readFileSync(0, "utf8").split("\n")) {
	if (!line.trim()) continue;
	const { message, contextWindow } = JSON.parse(line);
	const answer = {};
	for (const [version, check] of Object.entries(checks)) {
		try {
			answer[version] = check(message, contextWindow) === true;
		} catch {
			answer[version] = "throws";
		}
	}
	out.push(JSON.stringify(answer));
}
process.stdout.write(out.join("\n") + "\n");
