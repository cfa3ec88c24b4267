// Work queues: Fedify's inbox listener pushes verified activities onto one, and the
// follow-up work an activity causes (media, link cards, object fetches) goes to others.
// N asynchronous workers take from each in arrival order.

/* Work one item on queue q (WorkQueue or RedisWorkQueue: workMs, handler, stats, log, busy,
 * name): the pause standing for a database write, the handler, and its timings recorded. */
export async function runItem(q, item) {
    const t0 = performance.now();
    let verdict = "ok";
    let reason;
    let sub;
    q.busy++;
    try {
        if (q.workMs > 0) await new Promise((r) => setTimeout(r, q.workMs));
        const r = await q.handler(item);
        if (r && r.verdict) verdict = r.verdict;
        if (r && r.reason) reason = r.reason;
        if (r && r.sub) sub = r.sub;
    } catch (err) {
        verdict = "failed";
        reason = err && err.name ? err.name : "error";
        q.log(`${q.name}: ${item.type} failed: ${err && err.message ? err.message : err}`);
    }
    q.busy--;
    q.stats.recordDone(item.type, t0 - item.enqueuedAt, performance.now() - t0, verdict, reason, sub);
}

/* A FIFO with a moving head, so taking an item is O(1) (Array.shift is O(n)). */
export class WorkQueue {
    /* handler(item) returns {verdict: "ok"|"ignored", reason?, sub?} or throws (verdict
     * "failed"). stats has enqueued(t) and recordDone(t, waitMs, procMs,
     * verdict, reason, sub) (Stats or PoolStats). workMs: a pause added to every item's
     * processing, standing for a database write. maxDepth: items beyond it are dropped
     * (push returns false) and counted in this.dropped. */
    constructor({ workers, handler, stats, log, workMs = 0, maxDepth = Infinity, name = "worker" }) {
        this.workers = workers;
        this.workMs = workMs;
        this.maxDepth = maxDepth;
        this.name = name;
        this.dropped = 0;
        this.handler = handler;
        this.stats = stats;
        this.log = log;
        this.items = [];
        this.head = 0;
        this.peak = 0;
        this.busy = 0;
        this.waiters = [];
        this.stopped = false;
        this.running = [];
    }

    get depth() {
        return this.items.length - this.head;
    }

    push(type, payload) {
        if (this.stopped) return false;
        if (this.depth >= this.maxDepth) {
            this.dropped++;
            return false;
        }
        this.items.push({ type, payload, enqueuedAt: performance.now() });
        this.stats.enqueued(type);
        if (this.depth > this.peak) this.peak = this.depth;
        const w = this.waiters.shift();
        if (w) w();
        return true;
    }

    take() {
        if (this.depth === 0) return null;
        const item = this.items[this.head];
        this.items[this.head] = undefined;
        this.head++;
        if (this.head > 1024 && this.head * 2 > this.items.length) {
            this.items = this.items.slice(this.head);
            this.head = 0;
        }
        return item;
    }

    start() {
        for (let i = 0; i < this.workers; i++) this.running.push(this.worker());
    }

    async worker() {
        while (!this.stopped) {
            const item = this.take();
            if (item === null) {
                await new Promise((resolve) => this.waiters.push(resolve));
                continue;
            }
            await runItem(this, item);
        }
    }

    /* True when nothing is queued and no worker is busy. */
    get idle() {
        return this.depth === 0 && this.busy === 0;
    }

    /* Stops taking new items; resolves once every worker finished its current one. */
    async stop() {
        this.stopped = true;
        for (const w of this.waiters.splice(0)) w();
        await Promise.all(this.running);
    }
}
