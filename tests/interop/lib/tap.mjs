// A tiny test reporter: "ok N - what" / "not ok N - what" lines, with "# ..." diagnostics
// under a failure. A check passes when its function returns true, nothing, or { note } (a
// line printed under the ok); it fails when it returns false or a string (the reason), or
// throws.

let count = 0;
let failed = 0;
const diagHooks = [];

// Extra diagnostics to print under every failure (e.g. captured library logs).
export function onFailure(fn) {
  diagHooks.push(fn);
}

export function diag(text) {
  for (const line of String(text).split("\n")) process.stdout.write(`# ${line}\n`);
}

export async function check(what, fn) {
  count++;
  let verdict;
  try {
    verdict = await fn();
  } catch (error) {
    verdict = `threw: ${error?.stack ?? error}`;
  }
  if (verdict === true || verdict === undefined || typeof verdict?.note === "string") {
    process.stdout.write(`ok ${count} - ${what}\n`);
    if (verdict?.note) diag(verdict.note);
    return true;
  }
  failed++;
  process.stdout.write(`not ok ${count} - ${what}\n`);
  diag(verdict === false ? "check returned false" : verdict);
  for (const hook of diagHooks) {
    const extra = hook();
    if (extra) diag(extra);
  }
  return false;
}

// Compare and explain: a string naming the difference, or true.
export function same(label, got, want) {
  return got === want ? true : `${label}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`;
}

// Run each check in order; the first non-true verdict is the result.
export function all(...verdicts) {
  for (const v of verdicts) if (v !== true) return v;
  return true;
}

export function summary() {
  diag(`${count - failed} of ${count} checks passed`);
  return failed === 0 && count > 0 ? 0 : 1;
}
