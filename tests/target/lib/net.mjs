// Outgoing HTTP: routing of lab host names to loopback listeners, and counting of the
// deliveries Fedify makes.
import { Agent, buildConnector, setGlobalDispatcher } from "undici";

/* routes: [{match(hostname) -> bool, host, port}]. Every connection made by fetch (Fedify's
 * document loader and its deliveries both use the global fetch) to a matching host name goes
 * to host:port instead. Only the socket changes: the URL, and so the Host header and the
 * signed request target, stay as they were. The first matching route wins. */
export function installRoutes(routes) {
    const connect = buildConnector({ timeout: 10000 });
    const dispatcher = new Agent({
        connect: (opts, callback) => {
            const route = routes.find((r) => r.match(opts.hostname));
            if (!route) return connect(opts, callback);
            return connect(
                {
                    ...opts,
                    hostname: route.host,
                    host: route.host,
                    port: String(route.port),
                    servername: undefined,
                },
                callback
            );
        },
        headersTimeout: 30000,
        bodyTimeout: 30000,
    });
    setGlobalDispatcher(dispatcher);
}

/* Wraps the global fetch so every POST (Fedify's deliveries) is counted in
 * stats.deliveries: attempts, ok (2xx), failed, by status or transport error. */
export function countDeliveries(stats, log) {
    const inner = globalThis.fetch;
    globalThis.fetch = async (input, init) => {
        const method = String(
            init?.method ?? (input instanceof Request ? input.method : "GET")
        ).toUpperCase();
        if (method !== "POST") return inner(input, init);
        const d = stats.deliveries;
        const target = input instanceof Request ? input.url : String(input);
        d.attempts++;
        try {
            const res = await inner(input, init);
            d.by_status[res.status] = (d.by_status[res.status] ?? 0) + 1;
            if (res.ok) {
                d.ok++;
            } else {
                d.failed++;
                d.last_error = `${res.status} from ${target}`;
                log(`delivery: ${res.status} from ${target}`);
            }
            return res;
        } catch (err) {
            d.failed++;
            d.errors++;
            const why = err?.cause?.code ?? err?.message ?? String(err);
            d.last_error = `${why} to ${target}`;
            log(`delivery: ${why} to ${target}`);
            throw err;
        }
    };
}
