// The reference's RpcClient runs `node <cliPath> --mode rpc [args]`: this shim is that cliPath,
// and runs knightcode with the same arguments instead (KNIGHTCODE_PYTHON: the interpreter that
// has knightcode installed). stdin, stdout and stderr are the client's pipes; the client's
// SIGTERM (RpcClient.stop) is passed on, and knightcode's exit status becomes the shim's.
import { spawn } from "node:child_process";

const python = process.env.KNIGHTCODE_PYTHON;
if (!python) {
	process.stderr.write("shim.mjs: set KNIGHTCODE_PYTHON to the interpreter that runs knightcode\n");
	process.exit(2);
}
const child = spawn(python, ["-m", "knightcode", ...process.argv.slice(2)], { stdio: "inherit" });
for (const signal of ["SIGTERM", "SIGINT"]) {
	process.on(signal, () => child.kill(signal));
}
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
