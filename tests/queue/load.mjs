// A job queue in Redis at known depths, for flood's --target-queue tests: real BullMQ
// queues (the library Misskey's job queue is built on), or Sidekiq's layout written as
// Sidekiq's own client writes it. Jobs are enqueued and worked at set rates, so the depth
// at each second is known; every second one line "t=S depth=D" goes to stdout.
//
//   node load.mjs --redis 127.0.0.1:6379 --layout bullmq|sidekiq [--prefix P]
//        [--fill N] [--enqueue-rate R] [--work-rate W] [--seconds S]
//        [--delayed N] [--failed N] [--other N]
//
// BullMQ: queue "inbox" (and "deliver" holding --other jobs) with Misskey's prefix form
// "P:queue:NAME" (packages/backend/src/queue/const.ts); --delayed jobs with a delay of an
// hour; --failed jobs that fail once with no retry. Sidekiq (sidekiq lib/sidekiq/client.rb
// atomic_push, lib/sidekiq/fetch.rb): SADD queues NAME, LPUSH queue:NAME of the job's JSON
// ("class", "args", "jid", "queue", "retry", "created_at", "enqueued_at" in ms); a worker
// takes with BRPOP queue:NAME as Sidekiq's BasicFetch does; --delayed jobs go to the
// "schedule" sorted set and --failed to "retry", scored by their time as Sidekiq does.
import { randomBytes } from "node:crypto";

import { Queue, Worker } from "bullmq";
import IORedis from "ioredis";

function parse(argv) {
    const o = {
        redis: "127.0.0.1:6379",
        layout: "bullmq",
        prefix: "flood.test",
        fill: 0,
        enqueueRate: 0,
        workRate: 0,
        seconds: 5,
        delayed: 0,
        failed: 0,
        other: 0,
    };
    for (let i = 2; i < argv.length; i += 2) {
        const k = argv[i].replace(/^--/, "").replace(/-([a-z])/g, (_, c) => c.toUpperCase());
        if (!(k in o)) throw new Error(`unknown option ${argv[i]}`);
        o[k] = typeof o[k] === "number" ? Number(argv[i + 1]) : argv[i + 1];
    }
    const [host, port] = o.redis.split(":");
    o.connection = { host, port: Number(port), maxRetriesPerRequest: null };
    return o;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/* Enqueue at `rate` a second and work at `workRate` a second for `seconds`, printing the
 * depth each second; enqueue(n) and work() are the layout's. */
async function drive(o, enqueue, depth, work) {
    const t0 = Date.now();
    let queued = 0;
    let worked = 0;
    let nextPrint = 0;
    while (Date.now() - t0 < o.seconds * 1000) {
        const t = (Date.now() - t0) / 1000;
        const wantQueued = Math.floor(o.enqueueRate * t);
        if (wantQueued > queued) {
            await enqueue(wantQueued - queued);
            queued = wantQueued;
        }
        const wantWorked = Math.floor(o.workRate * t);
        while (worked < wantWorked && (await work())) worked++;
        if (t >= nextPrint) {
            process.stdout.write(`t=${nextPrint} depth=${await depth()}\n`);
            nextPrint++;
        }
        await sleep(20);
    }
}

async function bullmq(o) {
    const connection = o.connection;
    const prefix = (name) => `${o.prefix}:queue:${name}`;
    const inbox = new Queue("inbox", { connection, prefix: prefix("inbox") });
    const deliver = new Queue("deliver", { connection, prefix: prefix("deliver") });
    await inbox.waitUntilReady();
    await deliver.waitUntilReady();
    const add = async (q, n, opts = {}) => {
        for (let i = 0; i < n; i++) await q.add("activity", { n: i }, opts);
    };
    if (o.failed > 0) {
        const failing = new Queue("inbox", { connection, prefix: prefix("inbox") });
        await add(failing, o.failed, { attempts: 1 });
        // a worker that fails every job (the queue holds only these yet), then stops
        let left = o.failed;
        const w = new Worker(
            "inbox",
            async (job) => {
                left--;
                throw new Error(`job ${job.id} fails on purpose`);
            },
            { connection, prefix: prefix("inbox"), autorun: false },
        );
        w.run();
        while (left > 0) await sleep(20);
        await w.close();
        await failing.close();
    }
    // after the failing jobs, so the failing worker saw no other job
    await add(inbox, o.fill);
    await add(deliver, o.other);
    await add(inbox, o.delayed, { delay: 3600 * 1000 });
    const counts = async () => {
        const c = await inbox.getJobCounts("wait", "prioritized", "paused");
        return c.wait + c.prioritized + c.paused;
    };
    // One job taken and completed at a time, by hand, at the work rate.
    const worker = new Worker("inbox", null, { connection, prefix: prefix("inbox") });
    const token = randomBytes(8).toString("hex");
    const work = async () => {
        const job = await worker.getNextJob(token, { block: false });
        if (!job) return false;
        await job.moveToCompleted("done", token, false);
        return true;
    };
    await drive(o, (n) => add(inbox, n), counts, work);
    process.stdout.write(`final depth=${await counts()}\n`);
    await worker.close();
    await inbox.close();
    await deliver.close();
}

async function sidekiq(o) {
    const r = new IORedis(o.connection);
    const job = (queue) => ({
        retry: true,
        queue,
        class: "ActivityPub::ProcessingWorker",
        args: [1, "{}", null, "Account"],
        jid: randomBytes(12).toString("hex"),
        created_at: Date.now() / 1000,
    });
    const push = async (queue, n) => {
        if (n <= 0) return;
        const now = Date.now();
        const payloads = [];
        for (let i = 0; i < n; i++) payloads.push(JSON.stringify({ ...job(queue), enqueued_at: now }));
        await r.sadd("queues", queue);
        await r.lpush(`queue:${queue}`, ...payloads);
    };
    await push("ingress", o.fill);
    await push("push", o.other);
    const at = Date.now() / 1000 + 3600;
    for (let i = 0; i < o.delayed; i++) await r.zadd("schedule", at, JSON.stringify(job("ingress")));
    for (let i = 0; i < o.failed; i++) {
        const j = { ...job("ingress"), error_message: "fails on purpose", retry_count: 0 };
        await r.zadd("retry", at, JSON.stringify(j));
    }
    const work = async () => (await r.rpop("queue:ingress")) !== null;
    await drive(o, (n) => push("ingress", n), () => r.llen("queue:ingress"), work);
    process.stdout.write(`final depth=${await r.llen("queue:ingress")}\n`);
    r.disconnect();
}

const o = parse(process.argv);
(o.layout === "sidekiq" ? sidekiq(o) : bullmq(o)).then(
    () => process.exit(0),
    (err) => {
        process.stderr.write(`queue load: ${err?.stack ?? err}\n`);
        process.exit(1);
    },
);
