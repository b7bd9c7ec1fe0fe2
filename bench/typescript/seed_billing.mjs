// The TypeScript baseline: the seed article's billing example on the official MCP TypeScript
// SDK v2 (@modelcontextprotocol/server 2.4.0, McpServer under createMcpHandler), served
// statelessly with JSON answers from Node's own `node:http`, as a production deployment of it
// would run. The peer of bench/python/seed_billing.py, for the same requests.
//
// `list_invoices` is the article's code: input_required with a URL elicitation while the user
// has no grant, "2 open invoices." once they have. BENCH_GRANTED=1 starts with the grant in
// place (the grant-present and retry scenarios).
//
//     node_modules/.bin/node seed_billing.mjs 127.0.0.1:9003
//
// run from a directory holding this file and an `npm ci` of bench/typescript/package.json (the
// package is resolved from the file's own location; the pinned Node is node_modules/.bin/node).

import { randomBytes } from 'node:crypto';
import http from 'node:http';

import {
    createMcpHandler,
    createRequestStateCodec,
    hostHeaderValidationResponse,
    inputRequired,
    inputResponse,
    localhostAllowedHostnames,
    localhostAllowedOrigins,
    McpServer,
    originValidationResponse
} from '@modelcontextprotocol/server';

// Replicas of a production deployment share the requestState key; the benchmark's granted and
// ungranted instances do too, so a first round's state opens in the retry scenario. Without one
// the key is this process's own, as the Python SDK's default is. Its lifetime is grantry's in
// the benchmark (`--request-state-ttl 86400`): the retry scenario comes long after the first
// round, past the SDK's default of 600 s. The state is bound to the server and the method (the
// SDK's documented binding; there is no authenticated principal here).
const key = process.env.BENCH_STATE_KEY;
const stateCodec = createRequestStateCodec({
    key: key ? Buffer.from(key, 'hex') : randomBytes(32),
    ttlSeconds: 86400,
    bind: ctx => `billing\0${ctx.mcpReq.method}\0${ctx.http?.authInfo?.clientId ?? ''}`
});

const grants = new Map();
const flows = new Map(); // flow id -> the user who started that sign-in
if (process.env.BENCH_GRANTED === '1') {
    grants.set('user-123', 'grant');
}

const text = value => ({ content: [{ type: 'text', text: value }] });

// One server instance per request (the stateless entry calls this for every POST).
function billing() {
    const server = new McpServer(
        { name: 'billing', version: '' },
        { requestState: { verify: stateCodec.verify } }
    );
    server.registerTool(
        'list_invoices',
        { description: "List the open invoices in the user's billing account." },
        async ctx => {
            const user = 'user-123'; // stub: a real server takes the user from the access token
            const answer = inputResponse(ctx.mcpReq.inputResponses, 'login');
            if (answer.kind === 'elicit' && answer.action !== 'accept') {
                return text("The billing account isn't connected, so no invoices were read.");
            }
            if (grants.has(user)) {
                return text('2 open invoices.'); // a real tool calls the billing API with the grant
            }
            // No check of the client's capabilities here: a tool's throw becomes an isError
            // result under McpServer, and the SDK itself refuses an input_required result whose
            // URL elicitation the request's capabilities lack, with -32021 and
            // requiredCapabilities {elicitation: {url: {}}}.
            // The same flow on a retry: the verified state is the flow id minted last round.
            const flowId = ctx.mcpReq.requestState() ?? randomBytes(16).toString('base64url');
            flows.set(flowId, user);
            return inputRequired({
                inputRequests: {
                    login: inputRequired.elicitUrl({
                        message: 'Open this link to connect your billing account.',
                        url: `https://billing.example.com/connect?flow=${flowId}`
                    })
                },
                requestState: await stateCodec.mint(flowId, ctx)
            });
        }
    );
    return server;
}

const mcp = createMcpHandler(billing, { responseMode: 'json' });

const [host, port] = (() => {
    const arg = process.argv[2] ?? '127.0.0.1:9003';
    const at = arg.lastIndexOf(':');
    return [arg.slice(0, at), Number(arg.slice(at + 1))];
})();
// Bound to a loopback address, the endpoint refuses other Host and Origin headers (DNS
// rebinding protection), as the Python SDK turns on by itself for such a host.
const loopback = ['127.0.0.1', 'localhost', '::1', '[::1]'].includes(host);

// node:http to the SDK's web-standard face: one Request in, one Response out.
async function serve(req, res) {
    if (new URL(req.url, 'http://x').pathname !== '/mcp') {
        res.writeHead(404, { 'Content-Type': 'text/plain' }).end('Not Found');
        return;
    }
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const headers = new Headers();
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
        headers.append(req.rawHeaders[i], req.rawHeaders[i + 1]);
    }
    const aborted = new AbortController();
    res.on('close', () => res.writableFinished || aborted.abort());
    const request = new Request(`http://${req.headers.host ?? `${host}:${port}`}${req.url}`, {
        method: req.method,
        headers,
        body: req.method === 'GET' || req.method === 'HEAD' ? undefined : Buffer.concat(chunks),
        signal: aborted.signal
    });
    const response =
        (loopback &&
            (hostHeaderValidationResponse(request, localhostAllowedHostnames()) ??
                originValidationResponse(request, localhostAllowedOrigins()))) ||
        (await mcp.fetch(request));
    res.writeHead(response.status, [...response.headers].flat());
    if (response.body) {
        for await (const chunk of response.body) res.write(chunk);
    }
    res.end();
}

http.createServer((req, res) => {
    serve(req, res).catch(error => {
        console.error(error);
        if (!res.headersSent) res.writeHead(500);
        res.end();
    });
}).listen(port, host);
