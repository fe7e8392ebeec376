// mcp_client.mjs: `kgate mcp` driven the way an agent's MCP client drives
// it, with the official TypeScript SDK (@modelcontextprotocol/sdk, pinned
// by mcp.sh) over its stdio transport.  Prints one "ok - ..." or
// "not ok - ..." line per check; mcp.sh counts them and checks the files.
//
// Environment: MCP_SDK_DIR (where the SDK's node_modules is), KGATE_BIN,
// MCP_SERVER_ARGS (more arguments of kgate mcp, space-separated), REAL_HOME
// (the home the box must hide), MCP_EXPECT_BACKEND, MCP_TAG (a word unique
// to this run, for process names).  Runs in the project.
import { pathToFileURL } from 'node:url';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const sdk = join(process.env.MCP_SDK_DIR, 'node_modules/@modelcontextprotocol/sdk/dist/esm');
const { Client } = await import(pathToFileURL(join(sdk, 'client/index.js')).href);
const { StdioClientTransport } = await import(pathToFileURL(join(sdk, 'client/stdio.js')).href);

const HOME = process.env.REAL_HOME;
const TAG = process.env.MCP_TAG;
const PROJ = process.cwd();
let failed = 0;
function check(desc, cond, detail) {
    if (cond) {
        console.log(`ok - ${desc}`);
    } else {
        failed++;
        console.log(`not ok - ${desc}`);
        if (detail !== undefined) console.log(`# ${JSON.stringify(detail).slice(0, 2000)}`);
    }
}
const text = (r) => (r.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('');
const sleep = (ms) => new Promise((res) => setTimeout(res, ms));

const serverArgs = (process.env.MCP_SERVER_ARGS || '').split(' ').filter((a) => a);
const transport = new StdioClientTransport({
    command: process.env.KGATE_BIN,
    args: ['mcp', ...serverArgs],
    cwd: PROJ,
    env: process.env,
    stderr: 'inherit',
});
const client = new Client({ name: 'kgate-test', version: '1.0.0' });
await client.connect(transport);
check('initialize: the server says it is kgate', client.getServerVersion()?.name === 'kgate');
check('initialize: tools capability', !!client.getServerCapabilities()?.tools);

// The tools and their schemas.
const { tools } = await client.listTools();
const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
check('tools/list: run and doctor', byName.run && byName.doctor, tools.map((t) => t.name));
check('tools/list: run declares its input and output',
      byName.run?.inputSchema?.required?.includes('command') &&
          byName.run?.outputSchema?.properties?.exit_status);
check('tools/list: doctor declares its output', !!byName.doctor?.outputSchema?.properties?.report);

const run = (args) => client.callTool({ name: 'run', arguments: args });

// Output reaches the client, both streams and the status; the SDK has
// already checked structuredContent against the outputSchema.
let r = await run({ command: 'echo M-out; echo M-err >&2; echo MCP-AUDIT-' + TAG + ' >/dev/null; exit 3' });
check('run: stdout reaches the client as text', text(r).includes('M-out'), r);
check('run: stderr reaches the client', r.structuredContent?.stderr === 'M-err\n', r);
check('run: exit status 3, isError', r.structuredContent?.exit_status === 3 && r.isError === true, r);
r = await run({ command: 'echo M-zero' });
check('run: exit status 0 is no error', r.structuredContent?.exit_status === 0 && !r.isError, r);
check('run: hello and summary objects of the run',
      r.structuredContent?.events?.some((e) => e.type === 'summary' && e.started === true), r);

// A secret in the real home stays unreadable; a write there does not land.
r = await run({ command: `echo M-secret; cat "${HOME}/secret.txt"; echo M-after` });
check('run: the secret read ran (markers)', /M-secret\n(.*\n)?M-after/.test(r.structuredContent?.stdout), r);
check('run: the secret in $HOME is not read', !text(r).includes('TOPSECRET'), r);
r = await run({ command: `echo M-write; echo planted >"${HOME}/planted"; echo ran >home-write-ran` });
check('run: the write into $HOME ran (marker)', existsSync(join(PROJ, 'home-write-ran')), r);
check('run: the write into $HOME did not land', !existsSync(join(HOME, 'planted')), r);

// The deny list: refused before anything starts, and why reaches the client.
r = await run({ command: 'curl http://198.18.0.1/' });
const ev = r.structuredContent?.events || [];
check('run: curl is refused, 126', r.structuredContent?.exit_status === 126 && r.isError, r);
check('run: the refusal event reaches the client (rule deny_exec: curl)',
      ev.some((e) => e.type === 'blocked' && e.code === 'exec_denied' &&
                     e.rule?.key === 'deny_exec' && e.rule?.entry === 'curl'), r);
check('run: the refusal reason is in the text', /deny list/.test(text(r)), r);

// cwd: inside the project runs there; outside, or through a link out of
// it, is a tool error and nothing runs.
r = await run({ command: 'pwd', cwd: 'sub' });
check('run: cwd inside the project', r.structuredContent?.stdout === join(PROJ, 'sub') + '\n', r);
for (const cwd of ['/tmp', '..', 'link-out', HOME, 'sub/../..']) {
    r = await run({ command: `echo ran >"${PROJ}/cwd-ran"`, cwd });
    check(`run: cwd ${cwd} is refused as a tool error`, r.isError === true && !r.structuredContent, r);
}
check('run: a refused cwd ran nothing', !existsSync(join(PROJ, 'cwd-ran')));
// A project file above cwd would not apply there (a run's project is its
// working directory): refused; in cwd itself it applies, and the run goes.
mkdirSync(join(PROJ, 'sub/deeper'), { recursive: true });
writeFileSync(join(PROJ, 'sub/.kgate.yaml'), 'network: off\n');
r = await run({ command: `echo ran >"${PROJ}/yaml-ran"`, cwd: 'sub/deeper' });
check('run: cwd below a directory with a project file is refused',
      r.isError === true && /project file/.test(text(r)) && !existsSync(join(PROJ, 'yaml-ran')), r);
r = await run({ command: 'pwd', cwd: 'sub' });
check('run: cwd whose own project file applies', r.structuredContent?.stdout === join(PROJ, 'sub') + '\n', r);

// The bound on output: 3,000,000 bytes, 1 MiB kept, the rest counted.
r = await run({ command: "head -c 3000000 /dev/zero | tr '\\0' a" });
check('run: stdout cut at 1 MiB', r.structuredContent?.stdout?.length === 1048576, r.structuredContent?.stdout?.length);
check('run: the cut is counted', r.structuredContent?.stdout_cut_bytes === 3000000 - 1048576);
check('run: the cut is said', /stdout cut: 1951424 more bytes/.test(text(r)));

// A timeout ends the run and says so.
r = await run({ command: `echo M-start; exec sleep 61${TAG}`, timeout_ms: 1500 });
check('run: timed out', r.structuredContent?.timed_out === true && r.isError === true, r);
check('run: the run had started (marker)', r.structuredContent?.stdout === 'M-start\n', r);
check('run: the timeout is said', /took longer than 1500 ms/.test(text(r)), r);

// doctor.
r = await client.callTool({ name: 'doctor', arguments: {} });
const rep = r.structuredContent?.report;
check('doctor: a report with a verdict', ['READY', 'DEGRADED'].includes(rep?.verdict), r);
check(`doctor: backend ${process.env.MCP_EXPECT_BACKEND}`, rep?.backend === process.env.MCP_EXPECT_BACKEND, rep?.backend);

// Unknown tool: a protocol error the SDK throws.
let threw = null;
try {
    await client.callTool({ name: 'nope', arguments: {} });
} catch (e) {
    threw = e;
}
check('tools/call of an unknown tool is an error', threw && /-32602|unknown tool/i.test(String(threw)), String(threw));

// The client goes away while a run is going: the run is ended.  The run
// writes a marker first; the client closes once it is there.
const pending = run({ command: `echo started >long-started; sleep 62${TAG}; echo ended >long-ended` });
pending.catch(() => {});
for (let i = 0; i < 300 && !existsSync(join(PROJ, 'long-started')); i++) await sleep(100);
check('close: the long run had started (marker)', existsSync(join(PROJ, 'long-started')));
await client.close();
console.log(`# client done, ${failed} failed`);
process.exit(0);
