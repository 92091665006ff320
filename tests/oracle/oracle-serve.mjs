// serve: answers many plan / context / branch requests in one process, so pi's modules are imported
// once (the import is most of a short run's CPU: ~1 s). One request per stdin line,
//   {"argv": ["plan", "SESSION.jsonl", "--keep-recent", "4000"], "cwd": "DIR"}
// and per request two stdout lines: the command's JSON answer (an empty line when it printed none,
// e.g. a usage error) and {"exitCode": N, "stderr": "what a run would print on stderr"}.
// Each request starts as a fresh run would: ids from the counter's start, its own temp dir, its cwd.
//
// One loop for both oracles (pi-oracle.mjs and pi-1.6.0/pi-oracle.mjs): each passes in its own
// pieces, `oracle` = { loadPi, parseArgs, answer, errorText, UsageError, cleanupTmp, writeAllSync,
// startRequest (resets the id counter and the "emitted" flag), emitted (whether the answer was written) }.
import readline from "node:readline";

const SERVE_COMMANDS = ["plan", "context", "branch"];
const SERVE_USAGE = "usage: node pi-oracle.mjs serve [--pi-home DIR] [--native-ids] [--timings]";

export async function serve(argv, oracle) {
	const opts = {};
	for (let i = 0; i < argv.length; i++) {
		if (argv[i] === "--pi-home" && i + 1 < argv.length) opts.piHome = argv[++i];
		else if (argv[i] === "--native-ids") opts.nativeIds = true;
		else if (argv[i] !== "--timings") {
			process.stderr.write(`unknown argument ${JSON.stringify(argv[i])}\n${SERVE_USAGE}\n`);
			return 2;
		}
	}
	let pi;
	try {
		pi = await oracle.loadPi(opts);
	} catch (e) {
		process.stderr.write(`pi-oracle: ${oracle.errorText(e)}\n`);
		return 2;
	}
	const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
	for await (const line of lines) {
		if (!line.trim()) continue;
		const stderr = [];
		const writeStderr = process.stderr.write;
		process.stderr.write = (chunk) => {
			stderr.push(String(chunk));
			return true;
		};
		oracle.startRequest();
		let exitCode;
		try {
			exitCode = await serveRequest(pi, line, oracle);
		} catch (e) {
			stderr.push(`pi-oracle: internal error: ${e?.stack ?? e}\n`);
			exitCode = 3;
		} finally {
			process.stderr.write = writeStderr;
			oracle.cleanupTmp();
		}
		if (!oracle.emitted()) oracle.writeAllSync(1, "\n");
		oracle.writeAllSync(1, `${JSON.stringify({ exitCode, stderr: stderr.join("") })}\n`);
	}
	return 0;
}

async function serveRequest(pi, line, oracle) {
	let request;
	try {
		const req = JSON.parse(line);
		if (!req || !Array.isArray(req.argv)) {
			throw new oracle.UsageError('a request is {"argv": [COMMAND, SESSION, ...], "cwd": DIR}');
		}
		request = oracle.parseArgs(req.argv.map(String));
		if (!SERVE_COMMANDS.includes(request.command)) {
			throw new oracle.UsageError(`serve answers ${SERVE_COMMANDS.join(", ")}; run ${request.command} on its own`);
		}
		if (request.opts.piHome !== undefined || request.opts.nativeIds) {
			throw new oracle.UsageError("--pi-home and --native-ids are options of serve itself, not of a request");
		}
		if (req.cwd !== undefined) process.chdir(String(req.cwd));
	} catch (e) {
		process.stderr.write(`${oracle.errorText(e)}\n`);
		return 2;
	}
	return oracle.answer(pi, request.command, request.file, request.opts);
}
