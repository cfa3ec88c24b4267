// Outgoing HTTP: routing of lab host names to loopback listeners, and counting of the
// deliveries Fedify makes and of every GET the target makes to another host.
import { Resolver } from "node:dns";
import { Agent, Dispatcher, ProxyAgent, buildConnector, setGlobalDispatcher } from "undici";
import { fetchKind } from "./fetchkind.mjs";

/* routes: [{match(hostname) -> bool, host, port}]. Every connection made by fetch (Fedify's
 * document loader and its deliveries both use the global fetch) to a matching host name goes
 * to host:port instead. Only the socket changes: the URL, and so the Host header and the
 * signed request target, stay as they were. The first matching route wins.
 *
 * Hosts no route matches are reached as a server is pointed at the world:
 * - proxy ("http://ADDR:PORT"): through that outgoing proxy, as undici's ProxyAgent goes
 *   (a CONNECT tunnel for every origin, http:// ones too), the way Mastodon's http_proxy or
 *   GoToSocial's HTTPS_PROXY send a server's fetches through flood's --proxy;
 * - dns ({host, port}): names resolved by that name server alone (A records, UDP, then TCP
 *   on truncation), as a resolv.conf naming flood's --dns would; a name it refuses fails
 *   the fetch with the resolver's error;
 * - neither: the system's resolver and a direct connection. */
export function installRoutes(routes, { proxy = null, dns = null } = {}) {
    let lookup;
    if (dns) {
        const resolver = new Resolver({ timeout: 2000, tries: 2 });
        resolver.setServers([dns.host.includes(":") ? `[${dns.host}]:${dns.port}` : `${dns.host}:${dns.port}`]);
        lookup = (hostname, options, callback) => {
            resolver.resolve4(hostname, (err, addrs) => {
                if (err) return callback(err);
                if (options?.all) return callback(null, addrs.map((address) => ({ address, family: 4 })));
                callback(null, addrs[0], 4);
            });
        };
    }
    const connect = buildConnector({ timeout: 10000, ...(lookup ? { lookup } : {}) });
    const timeouts = { headersTimeout: 30000, bodyTimeout: 30000 };
    const direct = new Agent({
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
        ...timeouts,
    });
    if (!proxy) {
        setGlobalDispatcher(direct);
        return;
    }
    const proxied = new ProxyAgent({ uri: proxy, ...timeouts });
    setGlobalDispatcher(new Split(direct, proxied, (origin) => routes.some((r) => r.match(hostOf(origin)))));
}

function hostOf(origin) {
    try {
        return new URL(String(origin)).hostname;
    } catch {
        return "";
    }
}

/* A dispatcher sending each request to `direct` when routed(origin), else to `proxied`. */
class Split extends Dispatcher {
    constructor(direct, proxied, routed) {
        super();
        this.direct = direct;
        this.proxied = proxied;
        this.routed = routed;
    }
    dispatch(opts, handler) {
        return (this.routed(opts.origin) ? this.direct : this.proxied).dispatch(opts, handler);
    }
    async close() {
        await Promise.all([this.direct.close(), this.proxied.close()]);
    }
    async destroy(err) {
        await Promise.all([this.direct.destroy(err), this.proxied.destroy(err)]);
    }
}

/* Wraps the global fetch, which Fedify (document loader, key fetches, deliveries) and the
 * target's own workers all call: every POST (Fedify's deliveries) is counted in
 * stats.deliveries (attempts, ok (2xx), failed, by status or transport error), and every
 * GET to a host for which isOwnHost(hostname) is false in stats.fetches, by kind, with the
 * body bytes as they are read (a body nobody reads counts 0 bytes). A GET counts as an
 * error on a transport failure or a status of 400 or more. */
export function countOutgoing(stats, log, isOwnHost, { deliveryTimeoutMs = 0, onDelivery = null } = {}) {
    const inner = globalThis.fetch;
    globalThis.fetch = async (input, init) => {
        const method = String(
            init?.method ?? (input instanceof Request ? input.method : "GET")
        ).toUpperCase();
        if (method === "POST") return delivery(input, init);
        if (method !== "GET") return inner(input, init);
        const target = input instanceof Request ? input.url : String(input);
        let url;
        try {
            url = new URL(target);
        } catch {
            return inner(input, init);
        }
        if (isOwnHost(url.hostname)) return inner(input, init);
        return counted(url, input, init);
    };

    async function counted(url, input, init) {
        const f = stats.fetches;
        const e = f.by_kind[fetchKind(url)];
        e.count++;
        f.total.count++;
        let res;
        try {
            res = await inner(input, init);
        } catch (err) {
            e.errors++;
            f.total.errors++;
            f.transport_errors++;
            throw err;
        }
        f.by_status[res.status] = (f.by_status[res.status] ?? 0) + 1;
        if (res.status >= 400) {
            e.errors++;
            f.total.errors++;
        }
        if (res.body === null) return res;
        const body = res.body.pipeThrough(
            new TransformStream({
                transform(chunk, controller) {
                    e.bytes += chunk.byteLength;
                    f.total.bytes += chunk.byteLength;
                    controller.enqueue(chunk);
                },
            })
        );
        const out = new Response(body, {
            status: res.status,
            statusText: res.statusText,
            headers: res.headers,
        });
        /* Fedify's document loader reads the final URL from the response. */
        Object.defineProperty(out, "url", { value: res.url });
        Object.defineProperty(out, "redirected", { value: res.redirected });
        return out;
    }

    async function delivery(input, init) {
        const d = stats.deliveries;
        const target = input instanceof Request ? input.url : String(input);
        d.attempts++;
        if (deliveryTimeoutMs > 0) {
            /* --delivery-timeout-ms: a delivery to a host that never answers is given up */
            const t = AbortSignal.timeout(deliveryTimeoutMs);
            init = { ...(init ?? {}), signal: init?.signal ? AbortSignal.any([init.signal, t]) : t };
        }
        /* onDelivery (lib/retry.mjs): every attempt with its answer, for the retry policy's
         * Retry-After and the delivery log; the body's Digest names the delivery */
        const digest =
            input instanceof Request
                ? (input.headers.get("digest") ?? input.headers.get("content-digest"))
                : null;
        try {
            const res = await inner(input, init);
            onDelivery?.({ inbox: target, digest, status: res.status, retryAfter: res.headers.get("retry-after") });
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
            onDelivery?.({ inbox: target, digest, status: 0, retryAfter: null, error: String(why) });
            d.last_error = `${why} to ${target}`;
            log(`delivery: ${why} to ${target}`);
            throw err;
        }
    }
}
