// Drive knightcode with the reference's own RpcClient (the npm package's export), calling every
// method it has, in an order the scripted model server's queued replies match. Prints one JSON
// object to stdout: what each call returned and every event seen, for the Python test to check.
// Usage: node drive.mjs <package dir> <shim.mjs> <project dir>, with DRIVE_PROVIDER, DRIVE_MODEL
// and DRIVE_OTHER_MODEL in the environment (the models set_model switches between).
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const [packageDir, shim, cwd] = process.argv.slice(2);
const { DRIVE_PROVIDER: provider, DRIVE_MODEL: model, DRIVE_OTHER_MODEL: otherModel } = process.env;
const { RpcClient } = await import(pathToFileURL(join(packageDir, "dist", "index.js")).href);

const client = new RpcClient({ cliPath: shim, cwd, provider, model, args: ["--no-builtin-tools", "--tools", "read"] });
const events = [];
client.onEvent((event) => events.push(event));
const results = {};
const called = [];

async function call(name, run) {
	called.push(name);
	try {
		results[name] = (await run()) ?? null;
	} catch (error) {
		throw new Error(`${name}: ${error.message}`);
	}
}

function waitFor(predicate, timeout = 30000) {
	return new Promise((resolve, reject) => {
		const timer = setTimeout(() => reject(new Error(`no matching event in ${timeout} ms`)), timeout);
		const stop = client.onEvent((event) => {
			if (predicate(event)) {
				clearTimeout(timer);
				stop();
				resolve(event);
			}
		});
	});
}

try {
	await client.start();
	await call("getState", () => client.getState());
	await call("getAvailableModels", () => client.getAvailableModels());
	await call("setModel", () => client.setModel(provider, otherModel));
	await call("cycleModel", () => client.cycleModel());
	await client.setModel(provider, model);
	await call("setThinkingLevel", () => client.setThinkingLevel("off"));
	await call("cycleThinkingLevel", () => client.cycleThinkingLevel());
	await call("setSteeringMode", () => client.setSteeringMode("one-at-a-time"));
	await call("setFollowUpMode", () => client.setFollowUpMode("one-at-a-time"));
	await call("setAutoCompaction", () => client.setAutoCompaction(false));
	await call("setAutoRetry", () => client.setAutoRetry(false));
	// replies 1-2: a read tool call, then "done"
	await call("promptAndWait", async () => (await client.promptAndWait("Read a.txt")).map((e) => e.type));
	await call("getMessages", () => client.getMessages());
	await call("getLastAssistantText", () => client.getLastAssistantText());
	// replies 3-5: a slow answer, then one for the steered message, then one for the follow-up
	const idle = client.waitForIdle();
	await call("prompt", () => client.prompt("slow one"));
	await waitFor((e) => e.type === "message_update");
	await call("steer", () => client.steer("steered"));
	await call("followUp", () => client.followUp("followed"));
	await idle;
	// reply 6: a slow answer, aborted
	const aborted = client.waitForIdle();
	await client.prompt("to abort");
	await waitFor((e) => e.type === "message_update");
	await call("abort", () => client.abort());
	await aborted;
	await call("abortRetry", () => client.abortRetry());
	await call("bash", () => client.bash("echo from-bash"));
	await call("abortBash", () => client.abortBash());
	// reply 7: the summary
	await call("compact", () => client.compact("keep it short"));
	await call("getSessionStats", () => client.getSessionStats());
	await call("exportHtml", () => client.exportHtml(join(cwd, "export.html")));
	const sessionFile = (await client.getState()).sessionFile; // on disk: it holds answers
	await call("setSessionName", () => client.setSessionName("named"));
	results.stateAfterName = await client.getState();
	await call("getForkMessages", () => client.getForkMessages());
	await call("fork", () => client.fork(results.getForkMessages[1].entryId));
	results.messagesAfterFork = await client.getMessages();
	await call("clone", () => client.clone());
	await call("newSession", () => client.newSession());
	await call("switchSession", () => client.switchSession(sessionFile));
	await call("getCommands", () => client.getCommands());
	// reply 8: collectEvents, the last helper
	const collected = client.collectEvents();
	await client.prompt("last");
	results.collectEvents = (await collected).map((e) => e.type);
	called.push("collectEvents", "waitForIdle", "onEvent", "start");
	await call("getStderr", () => client.getStderr().length);
	await call("stop", () => client.stop());
	process.stdout.write(`${JSON.stringify({ called, results, events })}\n`);
} catch (error) {
	process.stderr.write(`drive.mjs: ${error.message}\nknightcode stderr:\n${client.getStderr()}\n`);
	await client.stop();
	process.exit(1);
}
