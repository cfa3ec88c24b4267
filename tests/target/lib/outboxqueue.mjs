// The delivery queue given to Fedify as its outbox queue, one lane per destination host.
//
// Fedify's own choice (ParallelMessageQueue over InProcessMessageQueue, `--delivery-queue
// fifo`) is one FIFO for every destination with N workers: a delivery to an instance that
// hangs holds a worker until it times out, and with N such deliveries at the head nothing
// else moves (Mastodon's push workers held by dead inboxes, mastodon#12445). This queue
// (`--delivery-queue per-destination`) gives each destination host its own FIFO with at
// most `perHost` deliveries in flight, and at most `workers` deliveries in flight in total,
// where a delivery in flight for longer than `stuckMs` no longer counts: a dead host holds
// its own lane and nothing else (as Lemmy 0.19's per-instance send queues, lemmy#3605).

export class PerDestinationQueue {
    /* workers: deliveries in flight in total; perHost: per destination host; stuckMs: a
     * delivery in flight longer than this no longer counts against workers. */
    constructor(workers, perHost = 1, stuckMs = 1000) {
        this.workers = workers;
        this.perHost = perHost;
        this.stuckMs = stuckMs;
        this.lanes = new Map(); /* host -> {q: [], busy: [startedMs...]} */
        this.ready = []; /* hosts with work, round robin */
        this.handler = null;
        this.inFlight = new Set(); /* {host, started} */
        this.timer = null;
    }

    enqueue(message, options) {
        const ms = durationMs(options?.delay);
        if (ms > 0) {
            setTimeout(() => this.#push(message), ms).unref?.();
        } else {
            this.#push(message);
        }
        return Promise.resolve();
    }

    async enqueueMany(messages, options) {
        for (const m of messages) await this.enqueue(m, options);
    }

    listen(handler, options = {}) {
        this.handler = handler;
        this.#pump();
        /* an idle tick to re-count stuck deliveries */
        this.timer = setInterval(() => this.#pump(), Math.max(100, this.stuckMs / 4));
        this.timer.unref?.();
        return new Promise((resolve) => {
            options.signal?.addEventListener("abort", () => {
                clearInterval(this.timer);
                resolve();
            });
        });
    }

    #push(message) {
        const host = hostOf(message?.inbox);
        let lane = this.lanes.get(host);
        if (!lane) {
            lane = { q: [], busy: 0 };
            this.lanes.set(host, lane);
        }
        lane.q.push(message);
        this.#pump();
    }

    #active() {
        const now = Date.now();
        let n = 0;
        for (const f of this.inFlight) if (now - f.started < this.stuckMs) n++;
        return n;
    }

    #pump() {
        if (!this.handler) return;
        let progress = true;
        while (progress && this.#active() < this.workers) {
            progress = false;
            for (const [host, lane] of this.lanes) {
                if (this.#active() >= this.workers) break;
                if (lane.q.length === 0 || lane.busy >= this.perHost) continue;
                const message = lane.q.shift();
                lane.busy++;
                const f = { host, started: Date.now() };
                this.inFlight.add(f);
                progress = true;
                Promise.resolve()
                    .then(() => this.handler(message))
                    .catch(() => {})
                    .finally(() => {
                        lane.busy--;
                        this.inFlight.delete(f);
                        if (lane.q.length === 0 && lane.busy === 0) this.lanes.delete(host);
                        this.#pump();
                    });
            }
        }
    }
}

function hostOf(u) {
    try {
        return new URL(String(u)).host;
    } catch {
        return "";
    }
}

/* A Temporal.Duration (or anything with total()) in milliseconds; 0 without one. */
function durationMs(d) {
    if (!d) return 0;
    try {
        if (typeof d.total === "function") return Math.max(0, d.total({ unit: "millisecond" }));
    } catch {
        /* fall through */
    }
    return 0;
}
