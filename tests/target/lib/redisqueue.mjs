// The inbox work queue on Redis, through BullMQ (the job queue library Misskey's queues are
// built on), keyed as Misskey keys its inbox queue: prefix "P:queue:inbox", queue "inbox"
// (packages/backend/src/queue/const.ts), so its keys are "P:queue:inbox:inbox:wait" and so
// on. Same surface as WorkQueue (lib/queue.mjs): push, depth, peak, busy, dropped, start,
// stop, idle. A job in Redis carries only an id: the verified activity it stands for stays in
// this process (a Fedify object does not serialize), taken when a worker gets the job. The
// order, the waiting and the workers' hand-off are BullMQ's, so the depth flood reads from
// Redis (--target-queue bullmq:...) is the real backlog.
import { Queue, Worker } from "bullmq";

import { Backlogged, Pacer, runItem } from "./queue.mjs";

export class RedisWorkQueue {
    /* As WorkQueue's constructor, plus redis ({host, port, db}) and prefix (the Redis
     * prefix Misskey would take from its config; default "flood-target"). */
    constructor({ workers, handler, stats, log, workMs = 0, serviceMs = 0, redis, prefix = "flood-target" }) {
        this.workers = workers;
        this.workMs = workMs;
        this.pacer = serviceMs > 0 ? new Pacer(workers, serviceMs) : null;
        this.backlogged = new Backlogged();
        this.name = "worker";
        this.dropped = 0;
        this.handler = handler;
        this.stats = stats;
        this.log = log;
        this.peak = 0;
        this.busy = 0;
        this.pending = new Map(); /* job id -> item */
        this.next = 1;
        this.stopped = false;
        this.connection = {
            host: redis.host,
            port: redis.port,
            db: redis.db ?? 0,
            maxRetriesPerRequest: null,
        };
        this.prefix = `${prefix}:queue:inbox`;
        this.queue = new Queue("inbox", { connection: this.connection, prefix: this.prefix });
        this.queue.on("error", (err) => this.log(`inbox queue (redis): ${err?.message ?? err}`));
        this.worker = null;
    }

    /* Items pushed and not yet taken by a worker (BullMQ's wait list holds the same). */
    get depth() {
        return this.pending.size;
    }

    push(type, payload) {
        if (this.stopped) return false;
        const id = String(this.next++);
        this.pending.set(id, { type, payload, enqueuedAt: performance.now() });
        this.stats.enqueued(type);
        if (this.depth > this.peak) this.peak = this.depth;
        /* removeOnComplete: Misskey's inbox jobs are removed once done (QueueService) */
        this.queue
            .add(type, { id }, { jobId: `activity-${id}`, removeOnComplete: true, removeOnFail: true })
            .catch((err) => {
                this.pending.delete(id);
                this.dropped++;
                this.log(`inbox queue (redis): add failed: ${err?.message ?? err}`);
            });
        return true;
    }

    start() {
        this.worker = new Worker(
            "inbox",
            async (job) => {
                const item = this.pending.get(job.data.id);
                if (!item) return;
                this.pending.delete(job.data.id);
                await runItem(this, item);
            },
            { connection: this.connection, prefix: this.prefix, concurrency: this.workers },
        );
        this.worker.on("error", (err) => this.log(`inbox worker (redis): ${err?.message ?? err}`));
    }

    get idle() {
        return this.depth === 0 && this.busy === 0;
    }

    /* Stops taking jobs; resolves once the workers finished their current ones. The queue's
     * keys are removed, so a later target on the same Redis starts empty. */
    async stop() {
        this.stopped = true;
        if (this.worker) await this.worker.close().catch(() => {});
        await this.queue.obliterate({ force: true }).catch(() => {});
        await this.queue.close().catch(() => {});
    }
}
