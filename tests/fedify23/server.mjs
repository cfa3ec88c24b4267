// A Fedify 2.3 server in benchmark mode (createFederation's benchmarkMode), for flood's
// --target-queue fedify: source: it serves GET /.well-known/fedify/bench/stats
// (packages/fedify/src/federation/bench.ts), whose "fedify.queue.depth" gauge is the depth
// of Fedify's own message queue. Received activities go through Fedify's inbox onto an
// InProcessMessageQueue, whose listener takes one message at a time; each holds it for
// --work-ms, so at a rate above 1000 / work-ms a second the queue grows.
//
//   node server.mjs [--listen 127.0.0.1:0] [--work-ms MS]
//
// Signatures are not verified (skipSignatureVerification): this server exists to be read,
// not to judge the crowd; the reference target (tests/target) verifies. Prints
// "listening on http://ADDR:PORT" once ready; SIGTERM stops it.
if (!globalThis.navigator) globalThis.navigator = { userAgent: "node" }; // Fedify 2 on Node 20

import http from "node:http";

import { createFederation, InProcessMessageQueue, MemoryKvStore } from "@fedify/fedify";
import { Activity, Person } from "@fedify/vocab";

const args = process.argv.slice(2);
const opt = (name, dflt) => {
    const i = args.indexOf(name);
    return i >= 0 && i + 1 < args.length ? args[i + 1] : dflt;
};
const [host, port] = opt("--listen", "127.0.0.1:0").split(":");
const workMs = Number(opt("--work-ms", "0"));
if (!Number.isFinite(workMs) || workMs < 0) {
    process.stderr.write("fedify23: --work-ms: a number of milliseconds\n");
    process.exit(2);
}

const federation = createFederation({
    kv: new MemoryKvStore(),
    queue: new InProcessMessageQueue(),
    benchmarkMode: { triggerSinks: [] },
    skipSignatureVerification: true,
});
federation.setActorDispatcher("/users/{identifier}", async (ctx, identifier) =>
    new Person({
        id: ctx.getActorUri(identifier),
        preferredUsername: identifier,
        inbox: ctx.getInboxUri(identifier),
    }));
let processed = 0;
federation.setInboxListeners("/users/{identifier}/inbox", "/inbox").on(Activity, async () => {
    if (workMs > 0) await new Promise((r) => setTimeout(r, workMs));
    processed++;
});

const server = http.createServer(async (req, res) => {
    try {
        const chunks = [];
        for await (const c of req) chunks.push(c);
        const body = Buffer.concat(chunks);
        const origin = `http://${req.headers.host ?? `${host}:${server.address().port}`}`;
        const headers = new Headers();
        for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers.set(k, v);
        const response = await federation.fetch(
            new Request(new URL(req.url, origin), {
                method: req.method,
                headers,
                body: req.method === "GET" || req.method === "HEAD" ? undefined : body,
            }),
            { contextData: undefined },
        );
        res.writeHead(response.status, Object.fromEntries(response.headers));
        res.end(Buffer.from(await response.arrayBuffer()));
    } catch (err) {
        process.stderr.write(`fedify23: ${req.method} ${req.url}: ${err?.message ?? err}\n`);
        if (!res.headersSent) res.writeHead(500).end();
    }
});
server.listen(Number(port), host, () => {
    process.stdout.write(`listening on http://${host}:${server.address().port}\n`);
});
process.on("SIGTERM", () => {
    process.stderr.write(`fedify23: ${processed} activities processed\n`);
    process.exit(0);
});
