// HTTP signatures both ways between flood and independent implementations:
//   flood signs   -> joyent http-signature, Fedify 1.5 verifyRequest (draft-cavage, RSA),
//                    http-message-signatures (RFC 9421, RSA and Ed25519) verify
//   they sign     -> flood verify: http-signature and Fedify signRequest (draft-cavage),
//                    http-message-signatures (RFC 9421, RSA and Ed25519)
// Every accepted request has negative twins: the body, the date (for RFC 9421 the signed
// `created`), the path and the query altered after signing, each of which the verifier must
// refuse (http-signature only with the Digest check its callers add, since it never sees
// the body);
// plus a stale date. Keys are made here with `openssl genpkey`, independently of flood.
//
//   node sign.mjs --flood PATH   the matrix against flood's `sign` and `verify` commands
//   node sign.mjs --self         the Node implementations against each other only (a check
//                                of this harness, for when flood's commands are not built)
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { captureFedifyLogs, clearFedifyLogs, takeFedifyLogs } from "./lib/fedify_log.mjs";
import {
  Flood,
  fedifySign,
  fedifyVerify,
  header,
  hmsSign,
  hmsVerify,
  httpSignatureSign,
  httpSignatureVerify,
  imfDate,
  withHeader,
} from "./lib/impls.mjs";
import { check, onFailure, summary } from "./lib/tap.mjs";

const ACTIVITY = {
  "@context": "https://www.w3.org/ns/activitystreams",
  id: "https://signer.test/users/alice/follows/1",
  type: "Follow",
  actor: "https://signer.test/users/alice",
  object: "https://target.test/users/carol",
};

// The requests signed: a delivery to an inbox, and signed GETs (authorized fetch), one
// with a query string (Fedify 1.5 leaves the query out of (request-target), so requests
// it verifies have none: see INTEROP.md).
const POST = {
  method: "POST",
  url: "https://target.test/users/carol/inbox",
  headers: [["Content-Type", "application/activity+json"]],
  body: Buffer.from(JSON.stringify(ACTIVITY)),
};
const GET = { method: "GET", url: "https://target.test/users/carol", headers: [], body: null };
const GET_QUERY = {
  method: "GET",
  url: "https://target.test/users/carol/outbox?page=true&min_id=0",
  headers: [],
  body: null,
};

function makeKeys(dir) {
  const openssl = (...args) => execFileSync("openssl", args, { stdio: ["ignore", "pipe", "pipe"] });
  const keys = {};
  for (const [type, genArgs, actor, frag] of [
    ["rsa", ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"], "alice", "main-key"],
    ["ed25519", ["-algorithm", "ED25519"], "bob", "ed25519-key"],
  ]) {
    const privPath = join(dir, `${type}.pem`);
    const pubPath = join(dir, `${type}.pub.pem`);
    openssl("genpkey", ...genArgs, "-out", privPath);
    openssl("pkey", "-in", privPath, "-pubout", "-out", pubPath);
    const actorId = `https://signer.test/users/${actor}`;
    keys[type] = {
      type,
      actorId,
      keyId: `${actorId}#${frag}`,
      privPath,
      pubPath,
      privPem: readFileSync(privPath, "utf8"),
      pubPem: readFileSync(pubPath, "utf8"),
    };
  }
  return keys;
}

// The altered twins of a signed request. For RFC 9421 the signing time is the `created`
// parameter (Date is not a covered component there), so that is what the date twin alters.
function tampered(signed, dialect) {
  const twins = [];
  if (signed.body != null) {
    const body = Buffer.from(signed.body);
    body[body.length - 2] ^= 0x01; // still JSON-looking, one bit off
    twins.push({ what: "body altered", msg: { ...signed, body }, expect: /digest/i });
  }
  if (dialect === "cavage") {
    const date = new Date(Date.parse(header(signed, "date")) + 1000).toUTCString();
    twins.push({ what: "Date moved 1 s", msg: withHeader(signed, "Date", date) });
  } else {
    const input = header(signed, "signature-input");
    const moved = input.replace(/;created=(\d+)/, (_, t) => `;created=${Number(t) - 1}`);
    twins.push({ what: "created moved 1 s", msg: withHeader(signed, "Signature-Input", moved) });
  }
  const u = new URL(signed.url);
  u.pathname = u.pathname.replace("carol", "dave");
  twins.push({ what: "path altered", msg: { ...signed, url: u.href } });
  if (new URL(signed.url).search) {
    const q = new URL(signed.url);
    q.searchParams.set("min_id", "1");
    twins.push({ what: "query altered", msg: { ...signed, url: q.href } });
  }
  return twins;
}

// The first line of a refusal, cut to a readable length.
function brief(reason) {
  const line = reason.split("\n")[0].replace(/^refused: /, "");
  return line.length > 160 ? `${line.slice(0, 157)}...` : line;
}

function showRequest(m) {
  const lines = [`${m.method} ${m.url}`, ...m.headers.map(([n, v]) => `${n}: ${v}`)];
  if (m.body != null) lines.push("", m.body.toString("utf8"));
  return lines.join("\n");
}

// One pairing: sign msg with signer, the verifier accepts; every twin is refused.
async function pair({
  signerName,
  signer,
  verifierName,
  verifier,
  msg,
  key,
  dialect,
  signOpts = {},
  isFlood,
  isFloodSigner,
}) {
  const now = Math.floor(Date.now() / 1000);
  const u = new URL(msg.url);
  const variant = signOpts.withAlg === false ? " without alg" : "";
  const target = `${msg.method} ${u.pathname}${u.search}`;
  const what = `${signerName} signs ${dialect}${variant} ${key.type} ${target}`;
  let signed = null;
  clearFedifyLogs();
  const accepted = await check(`${what}; ${verifierName} accepts`, async () => {
    signed = await signer(msg, key, { dialect, time: now, ...signOpts });
    const v = await verifier(signed, key, { now });
    if (v !== true) return `${v}\nrequest:\n${showRequest(signed)}`;
    // What flood chose to cover, for the record.
    if (isFloodSigner) {
      const covered =
        header(signed, "signature-input") ??
        /headers="[^"]*"/.exec(header(signed, "signature"))?.[0];
      return { note: `flood covered: ${covered}` };
    }
    return true;
  });
  if (!accepted || signed == null) return;
  for (const twin of tampered(signed, dialect)) {
    await check(`${what}, ${twin.what}; ${verifierName} refuses`, async () => {
      const v = await verifier(twin.msg, key, { now });
      if (v === true) return `accepted:\n${showRequest(twin.msg)}`;
      if (isFlood && !v.startsWith("refused: ")) return `not a clean refusal: ${v}`;
      if (isFlood && twin.expect && !twin.expect.test(v)) {
        return `refused for the wrong reason (want ${twin.expect}): ${v}`;
      }
      return { note: isFlood ? brief(v) : `${verifierName}: ${brief(v)}` };
    });
  }
}

// A signature two hours old: the verifier's window (Fedify 1 h, http-signature 300 s,
// flood's --window 3600 as given here) refuses it.
async function stale({ signerName, signer, verifierName, verifier, msg, key, dialect, isFlood }) {
  const now = Math.floor(Date.now() / 1000);
  await check(
    `${signerName} signs ${dialect} with a date 2 h old; ${verifierName} refuses`,
    async () => {
      const signed = await signer(msg, key, { dialect, time: now - 7200 });
      const v = await verifier(signed, key, { now, window: 3600 });
      if (v === true) return `accepted:\n${showRequest(signed)}`;
      if (isFlood && !v.startsWith("refused: ")) return `not a clean refusal: ${v}`;
      return { note: isFlood ? brief(v) : `${verifierName}: ${brief(v)}` };
    },
  );
}

async function main() {
  const argv = process.argv.slice(2);
  const self = argv[0] === "--self";
  const floodBin = argv[0] === "--flood" ? argv[1] : null;
  if (!self && !floodBin) throw new Error("usage: node sign.mjs --flood PATH | --self");
  await captureFedifyLogs();
  onFailure(takeFedifyLogs);
  const dir = mkdtempSync(join(tmpdir(), "flood-interop-keys-"));
  const flood = floodBin ? new Flood(floodBin) : null;
  try {
    const keys = makeKeys(dir);
    const { rsa, ed25519 } = keys;
    const S = {
      flood: flood && ((m, k, o) => flood.sign(m, k, o)),
      httpsig: httpSignatureSign,
      fedify: fedifySign,
      hms: hmsSign,
    };
    const V = {
      flood: flood && ((m, k, o) => flood.verify(m, k, o)),
      httpsig: (m, k) => httpSignatureVerify(m, k),
      fedify: fedifyVerify,
      hms: hmsVerify,
    };
    const names = {
      flood: "flood",
      httpsig: "http-signature",
      fedify: "Fedify",
      hms: "http-message-signatures",
    };
    const p = (s, v, msg, key, dialect, signOpts) =>
      pair({
        signerName: names[s],
        signer: S[s],
        verifierName: names[v],
        verifier: V[v],
        msg,
        key,
        dialect,
        signOpts,
        isFlood: v === "flood",
        isFloodSigner: s === "flood",
      });
    const st = (s, v, msg, key, dialect) =>
      stale({
        signerName: names[s],
        signer: S[s],
        verifierName: names[v],
        verifier: V[v],
        msg,
        key,
        dialect,
        isFlood: v === "flood",
      });

    if (self) {
      // The harness itself: each Node implementation against another.
      await p("fedify", "httpsig", POST, rsa, "cavage");
      await p("httpsig", "fedify", POST, rsa, "cavage");
      await p("httpsig", "fedify", GET, rsa, "cavage");
      await p("fedify", "httpsig", GET, rsa, "cavage");
      await p("hms", "hms", POST, rsa, "rfc9421");
      await p("hms", "hms", POST, ed25519, "rfc9421");
      await p("hms", "hms", GET_QUERY, rsa, "rfc9421");
      await st("fedify", "httpsig", POST, rsa, "cavage");
      await st("httpsig", "fedify", POST, rsa, "cavage");
      await st("hms", "hms", POST, ed25519, "rfc9421");
      return summary();
    }

    // (a) flood signs draft-cavage; joyent http-signature verifies.
    await p("flood", "httpsig", POST, rsa, "cavage");
    await p("flood", "httpsig", GET_QUERY, rsa, "cavage");
    await st("flood", "httpsig", POST, rsa, "cavage");
    // (b) flood signs; Fedify 1.5 verifies draft-cavage (RSA: all 1.5 verifies), and
    // http-message-signatures verifies RFC 9421, which Fedify 1.5 does not implement.
    await p("flood", "fedify", POST, rsa, "cavage");
    await p("flood", "fedify", GET, rsa, "cavage");
    await st("flood", "fedify", POST, rsa, "cavage");
    await p("flood", "hms", POST, rsa, "rfc9421");
    await p("flood", "hms", POST, ed25519, "rfc9421");
    await p("flood", "hms", GET_QUERY, rsa, "rfc9421");
    await p("flood", "hms", GET, ed25519, "rfc9421");
    // (c) joyent http-signature signs; flood verifies.
    await p("httpsig", "flood", POST, rsa, "cavage");
    await p("httpsig", "flood", GET_QUERY, rsa, "cavage");
    // (d) Fedify signs (draft-cavage, RSA: all 1.5 signs); flood verifies.
    await p("fedify", "flood", POST, rsa, "cavage");
    await p("fedify", "flood", GET, rsa, "cavage");
    await st("fedify", "flood", POST, rsa, "cavage");
    // (e) http-message-signatures signs RFC 9421; flood verifies, with and without alg.
    await p("hms", "flood", POST, rsa, "rfc9421");
    await p("hms", "flood", POST, ed25519, "rfc9421");
    await p("hms", "flood", POST, rsa, "rfc9421", { withAlg: false });
    await p("hms", "flood", GET_QUERY, ed25519, "rfc9421");
    await st("hms", "flood", POST, rsa, "rfc9421");
    return summary();
  } finally {
    flood?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (error) => {
    process.stdout.write(`not ok 0 - sign.mjs: ${error?.stack ?? error}\n`);
    process.exit(1);
  },
);
