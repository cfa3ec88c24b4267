// Unit tests of lib/queue.mjs's pacing (--service-ms) and backlog throughput: a worker kept
// busy finishes one item every serviceMs whatever each item's own time (while it fits), an
// item that does not fit is counted as overran, and the backlog's throughput is what the
// queue got through while items waited.
// Run: node --test tests/target/test/
import assert from "node:assert/strict";
import { test } from "node:test";
import { Backlogged, WorkQueue } from "../lib/queue.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// A queue of `workers` paced at serviceMs, each item taking its own time (ms) first; n items
// pushed at once. Resolves with [elapsed ms, the queue, each item's due time in order].
async function drain(workers, serviceMs, n, itemMs) {
    const stats = { enqueued() {}, recordDone() {} };
    const q = new WorkQueue({
        workers,
        serviceMs,
        stats,
        log: () => {},
        handler: async () => {
            if (itemMs) await sleep(itemMs);
        },
    });
    const dues = [];
    const hold = q.pacer.hold.bind(q.pacer);
    q.pacer.hold = (slot, waiting) => {
        dues.push(slot.due);
        return hold(slot, waiting);
    };
    const t0 = performance.now();
    for (let i = 0; i < n; i++) q.push("Create", {});
    q.start();
    while (!q.idle) await sleep(5);
    const took = performance.now() - t0;
    await q.stop();
    return [took, q, dues.sort((a, b) => a - b)];
}

// Each due time after the first `workers` ones: spaced serviceMs / workers, exactly (the
// items' own time and the hand-off are inside the slot); none late (timers fire late, never
// early, and an item 5 ms long overruns a 60 ms slot only on a machine stalled for 55 ms).
function spacing(dues, workers) {
    return dues.slice(workers).map((d, i) => Math.round((d - dues[i]) * 1000) / 1000);
}

test("one paced worker finishes one item every serviceMs, its own time included", async () => {
    const [took, q, dues] = await drain(1, 60, 8, 5);
    assert.ok(took >= 8 * 60 - 5, `8 items in ${took} ms: not before 480 ms`);
    if (q.pacer.json().overran === 0)
        assert.deepEqual(spacing(dues, 1), Array(7).fill(60), "a slot every 60 ms, back to back");
    assert.equal(q.pacer.json().items, 8);
    const b = q.backlogged.json();
    assert.equal(b.items, 7, "the 7 items finished after one that left others waiting");
    // the 7 gaps between ends: 7 x 60 ms, less at most the first end's timer lateness
    assert.ok(b.seconds >= 0.36, `backlogged ${b.seconds} s`);
});

test("two paced workers: a slot each, twice the rate", async () => {
    const [took, q, dues] = await drain(2, 60, 8, 5);
    assert.ok(took >= 4 * 60 - 5, `8 items in ${took} ms: not before 240 ms`);
    if (q.pacer.json().overran === 0)
        assert.deepEqual(spacing(dues, 2), Array(6).fill(60), "each worker's slots 60 ms apart");
});

test("an item longer than its slot is counted as overran", async () => {
    const [, q] = await drain(1, 20, 3, 45);
    assert.equal(q.pacer.json().overran, 3);
});

test("backlog throughput counts only the ends that left items waiting", () => {
    const b = new Backlogged();
    b.done(0, true);
    b.done(50, true);
    b.done(100, false); // the queue ran dry here
    b.done(1000, true); // the idle time before this end is not counted
    b.done(1050, false);
    assert.deepEqual(b.json(), { items: 3, seconds: 0.15, per_s: 20 });
});
