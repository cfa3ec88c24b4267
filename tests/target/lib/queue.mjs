// Work queues: Fedify's inbox listener pushes verified activities onto one, and the
// follow-up work an activity causes (media, link cards, object fetches) goes to others.
// N asynchronous workers take from each in arrival order.

/* --service-ms: a busy worker finishes one item every serviceMs, its own processing and the
 * queue's hand-off to it included, so the queue's capacity is exactly workers x 1000 /
 * serviceMs items a second while the hand-off and the processing fit in that time (workMs,
 * by contrast, adds to the processing, whose own time grows on a busy machine). One slot a
 * worker: an item taken by a worker that was freed with items waiting, or less than
 * serviceMs / 2 before, is due serviceMs after that worker's last item was due (back to
 * back: the hand-off's time is absorbed), else serviceMs after it was taken. An item whose
 * hand-off and processing outlast its slot is counted in overran: the construction did not
 * hold for it. */
export class Pacer {
    constructor(workers, serviceMs) {
        this.serviceMs = serviceMs;
        this.slots = Array.from({ length: workers }, () => ({ busy: false, due: -Infinity }));
        this.overran = 0;
        this.paced = 0;
    }

    /* A free slot for an item taken at t0 (the one freed last), marked busy. */
    take(t0) {
        let s = null;
        for (const x of this.slots) if (!x.busy && (!s || x.due > s.due)) s = x;
        if (!s) s = { busy: false, due: -Infinity }; /* more in flight than workers: none shared */
        s.busy = true;
        s.due = (s.waiting || t0 - s.due < this.serviceMs / 2 ? s.due : t0) + this.serviceMs;
        return s;
    }

    /* Hold the item until its slot is due; an item past it counts as overran. waiting(): are
     * items waiting now (the worker goes on to the next at once)? */
    async hold(s, waiting) {
        const left = s.due - performance.now();
        this.paced++;
        if (left > 0) await new Promise((r) => setTimeout(r, left));
        else if (left < -1) {
            this.overran++;
            s.due = performance.now();
        }
        s.waiting = waiting();
        s.busy = false;
    }

    json() {
        return { service_ms: this.serviceMs, items: this.paced, overran: this.overran };
    }
}

/* What a queue got through while it had a backlog: the time from each item's end to the
 * next one's, counted when items were waiting at the first end (so the workers went on at
 * once). Its rate is the queue's capacity as it really was: workers x 1000 / serviceMs
 * when --service-ms held, less where the machine did not give the process the CPU. */
export class Backlogged {
    constructor() {
        this.items = 0;
        this.ms = 0;
        this.last = null;
        this.waiting = false;
    }

    done(t, waiting) {
        if (this.last !== null && this.waiting) {
            this.items++;
            this.ms += t - this.last;
        }
        this.last = t;
        this.waiting = waiting;
    }

    json() {
        return {
            items: this.items,
            seconds: Math.round(this.ms) / 1000,
            per_s: this.ms > 0 ? Math.round((this.items * 1e5) / this.ms) / 100 : null,
        };
    }
}

/* Work one item on queue q (WorkQueue or RedisWorkQueue: workMs, pacer, handler, stats, log,
 * busy, name): the pause standing for a database write, the handler, the hold to its slot
 * (--service-ms), and its timings recorded. */
export async function runItem(q, item) {
    const t0 = performance.now();
    let verdict = "ok";
    let reason;
    let sub;
    q.busy++;
    const slot = q.pacer ? q.pacer.take(t0) : null;
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
    if (slot) await q.pacer.hold(slot, () => q.depth > 0);
    q.busy--;
    q.backlogged?.done(performance.now(), q.depth > 0);
    q.stats.recordDone(item.type, t0 - item.enqueuedAt, performance.now() - t0, verdict, reason, sub);
}

/* A FIFO with a moving head, so taking an item is O(1) (Array.shift is O(n)). */
export class WorkQueue {
    /* handler(item) returns {verdict: "ok"|"ignored", reason?, sub?} or throws (verdict
     * "failed"). stats has enqueued(t) and recordDone(t, waitMs, procMs,
     * verdict, reason, sub) (Stats or PoolStats). workMs: a pause added to every item's
     * processing, standing for a database write. maxDepth: items beyond it are dropped
     * (push returns false) and counted in this.dropped. */
    constructor({ workers, handler, stats, log, workMs = 0, serviceMs = 0, maxDepth = Infinity, name = "worker" }) {
        this.workers = workers;
        this.workMs = workMs;
        this.pacer = serviceMs > 0 ? new Pacer(workers, serviceMs) : null;
        this.backlogged = new Backlogged();
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
