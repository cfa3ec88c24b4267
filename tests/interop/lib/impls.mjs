// Signers and verifiers of HTTP requests, one per implementation, all with one shape so the
// test matrix can pair any signer with any verifier:
//
//   message: { method, url, headers: [[name, value], ...], body: Buffer | null }
//   key:     { type: "rsa" | "ed25519", keyId, actorId, privPem, pubPem, privPath, pubPath }
//   signer:  async (message, key, { dialect, time }) -> signed message (new headers)
//   verifier: async (message, key, { now }) -> true, or a string saying why it refused
//
// Independent implementations: joyent http-signature (draft-cavage), Fedify 1.5 (its
// signRequest / verifyRequest: draft-cavage with RSA only; 1.5 has no RFC 9421), and
// http-message-signatures (RFC 9421). flood itself is driven through `flood sign` and
// `flood verify`.
import { createHash, createPrivateKey, createPublicKey } from "node:crypto";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getDocumentLoader, signRequest, verifyRequest } from "@fedify/fedify";
import { createSigner, createVerifier, httpbis } from "http-message-signatures";
import { fedifyLastRefusal } from "./fedify_log.mjs";

const require = createRequire(import.meta.url);
const httpSignature = require("http-signature");

// ---- helpers ---------------------------------------------------------------------------

export function header(msg, name) {
  const h = msg.headers.find(([n]) => n.toLowerCase() === name.toLowerCase());
  return h ? h[1] : undefined;
}

// A copy of msg with header name set to value (replacing any of that name), or removed
// when value is undefined.
export function withHeader(msg, name, value) {
  const headers = msg.headers.filter(([n]) => n.toLowerCase() !== name.toLowerCase());
  if (value !== undefined) headers.push([name, value]);
  return { ...msg, headers };
}

export function imfDate(epochSeconds) {
  return new Date(epochSeconds * 1000).toUTCString(); // IMF-fixdate, "GMT"
}

function sha256b64(body) {
  return createHash("sha256")
    .update(body ?? Buffer.alloc(0))
    .digest("base64");
}

// Digest (RFC 3230, as the fediverse sends it): SHA-256=<base64>.
export function digestHeader(body) {
  return `SHA-256=${sha256b64(body)}`;
}

// Content-Digest (RFC 9530): sha-256=:<base64>:.
export function contentDigestHeader(body) {
  return `sha-256=:${sha256b64(body)}:`;
}

// Checks a Digest header against the body: true or a reason.
function checkDigest(value, body) {
  if (value === undefined) return "no Digest header";
  const want = sha256b64(body);
  for (const part of value.split(",")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim().toLowerCase() === "sha-256") {
      return part.slice(eq + 1).trim() === want ? true : `digest mismatch: ${value}`;
    }
  }
  return `no SHA-256 in Digest '${value}'`;
}

// Checks a Content-Digest header (an RFC 8941 dictionary of byte sequences).
function checkContentDigest(value, body) {
  if (value === undefined) return "no Content-Digest header";
  const want = sha256b64(body);
  for (const part of value.split(",")) {
    const m = /^\s*([a-z0-9-]+)=:([A-Za-z0-9+/=]*):\s*$/.exec(part);
    if (m && m[1] === "sha-256") {
      return m[2] === want ? true : `content-digest mismatch: ${value}`;
    }
  }
  return `no sha-256 in Content-Digest '${value}'`;
}

function pathAndQuery(url) {
  const u = new URL(url);
  return u.pathname + u.search;
}

// ---- joyent http-signature (draft-cavage) ---------------------------------------------

// Signs the way ActivityPub servers do with it (PeerTube's fork of this package): the
// Signature header, rsa-sha256, (request-target) host date [digest content-type].
export async function httpSignatureSign(msg, key, { time }) {
  let m = withHeader(msg, "Host", new URL(msg.url).host);
  m = withHeader(m, "Date", imfDate(time));
  const names = ["(request-target)", "host", "date"];
  if (m.body != null) {
    m = withHeader(m, "Digest", digestHeader(m.body));
    names.push("digest");
    if (header(m, "content-type") !== undefined) names.push("content-type");
  }
  const map = new Map(m.headers.map(([n, v]) => [n.toLowerCase(), [n, v]]));
  const fakeClientRequest = {
    method: m.method,
    path: pathAndQuery(m.url),
    getHeader: (name) => map.get(name.toLowerCase())?.[1],
    setHeader: (name, value) => map.set(name.toLowerCase(), [name, value]),
  };
  httpSignature.signRequest(fakeClientRequest, {
    key: key.privPem,
    keyId: key.keyId,
    algorithm: key.type === "rsa" ? "rsa-sha256" : "ed25519-sha512",
    headers: names,
    authorizationHeaderName: "Signature",
  });
  return { ...m, headers: [...map.values()] };
}

// Verifies as a server using it would: parseRequest on an IncomingMessage-like object,
// verifySignature with the sender's key, and the Digest against the body (the package
// leaves the body to its caller), with digest required in the signed list on a POST.
export async function httpSignatureVerify(msg, key, { clockSkew = 300 } = {}) {
  const headers = {};
  for (const [n, v] of msg.headers) headers[n.toLowerCase()] = v;
  const fakeIncomingMessage = {
    method: msg.method,
    url: pathAndQuery(msg.url),
    httpVersion: "1.1",
    headers,
  };
  let parsed;
  try {
    parsed = httpSignature.parseRequest(fakeIncomingMessage, {
      clockSkew,
      headers: msg.body != null ? ["(request-target)", "host", "date", "digest"] : ["date"],
    });
  } catch (error) {
    return `parseRequest: ${error.name}: ${error.message}`;
  }
  if (parsed.keyId !== key.keyId) return `keyId ${parsed.keyId}, want ${key.keyId}`;
  if (!httpSignature.verifySignature(parsed, key.pubPem)) {
    return `verifySignature: false (signing string ${JSON.stringify(parsed.signingString)})`;
  }
  if (msg.body != null) return checkDigest(headers.digest, msg.body);
  return true;
}

// ---- Fedify 1.5 (draft-cavage, RSA) ----------------------------------------------------

async function fedifyPrivateKey(key) {
  const der = createPrivateKey(key.privPem).export({ type: "pkcs8", format: "der" });
  return crypto.subtle.importKey(
    "pkcs8",
    der,
    { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" },
    true,
    ["sign"],
  );
}

function toRequest(msg) {
  return new Request(msg.url, {
    method: msg.method,
    headers: msg.headers,
    body: msg.body ?? undefined,
  });
}

async function fromRequest(req) {
  const body =
    req.method === "GET" || req.method === "HEAD" ? null : Buffer.from(await req.arrayBuffer());
  return { method: req.method, url: req.url, headers: [...req.headers], body };
}

// Fedify signs every header the request carries; it adds Host, Date (kept when present)
// and Digest. The Date is set first so the signing time is the one asked for.
export async function fedifySign(msg, key, { time }) {
  if (key.type !== "rsa") throw new Error("Fedify 1.5 signs with RSA keys only");
  const m = withHeader(msg, "Date", imfDate(time));
  const signed = await signRequest(toRequest(m), await fedifyPrivateKey(key), new URL(key.keyId));
  return fromRequest(signed);
}

// The actor document Fedify fetches for the keyId, served from memory.
function fedifyDocumentLoader(key) {
  const actor = {
    "@context": ["https://www.w3.org/ns/activitystreams", "https://w3id.org/security/v1"],
    id: key.actorId,
    type: "Person",
    preferredUsername: new URL(key.actorId).pathname.split("/").pop(),
    inbox: `${key.actorId}/inbox`,
    publicKey: { id: key.keyId, owner: key.actorId, publicKeyPem: key.pubPem },
  };
  const preloaded = getDocumentLoader(); // JSON-LD contexts, built in: no network
  return async (url) => {
    const u = new URL(url);
    u.hash = "";
    if (u.href === key.actorId) return { contextUrl: null, document: actor, documentUrl: u.href };
    return preloaded(url);
  };
}

export async function fedifyVerify(msg, key) {
  if (key.type !== "rsa") return "Fedify 1.5 verifies RSA keys only";
  const loader = fedifyDocumentLoader(key);
  const got = await verifyRequest(toRequest(msg), {
    documentLoader: loader,
    contextLoader: loader,
  });
  if (got == null) {
    const why = fedifyLastRefusal();
    return `verifyRequest returned null${why ? ` (${why})` : ""}`;
  }
  return got.id?.href === key.keyId ? true : `verified with key ${got.id?.href}, want ${key.keyId}`;
}

// ---- http-message-signatures (RFC 9421) ------------------------------------------------

function hmsAlg(key) {
  return key.type === "rsa" ? "rsa-v1_5-sha256" : "ed25519";
}

function hmsRequest(msg) {
  const headers = {};
  for (const [n, v] of msg.headers) headers[n.toLowerCase()] = v;
  return { method: msg.method, url: msg.url, headers };
}

// RFC 9421 as Mastodon expects it: @method and @target-uri covered, content-digest on a
// POST, keyid and created parameters; alg too unless withAlg is false (Mastodon omits it).
export async function hmsSign(msg, key, { time, withAlg = true, fields }) {
  let m = withHeader(msg, "Host", new URL(msg.url).host);
  const covered = fields ?? ["@method", "@target-uri", "@authority"];
  if (m.body != null && !fields) {
    m = withHeader(m, "Content-Digest", contentDigestHeader(m.body));
    covered.push("content-digest");
    if (header(m, "content-type") !== undefined) covered.push("content-type");
  }
  const signer = createSigner(createPrivateKey(key.privPem), hmsAlg(key), key.keyId);
  const signed = await httpbis.signMessage(
    {
      key: signer,
      fields: covered,
      params: withAlg ? ["created", "keyid", "alg"] : ["created", "keyid"],
      paramValues: { created: new Date(time * 1000) },
    },
    hmsRequest(m),
  );
  const headers = m.headers.slice();
  for (const [n, v] of Object.entries(signed.headers)) {
    if (n === "Signature" || n === "Signature-Input") headers.push([n, v]);
  }
  return { ...m, headers };
}

export async function hmsVerify(msg, key, { now, window = 3600 } = {}) {
  const nowS = now ?? Math.floor(Date.now() / 1000);
  const required = ["@method", "@target-uri"];
  if (msg.body != null) required.push("content-digest");
  let ok;
  try {
    ok = await httpbis.verifyMessage(
      {
        keyLookup: async (params) =>
          params.keyid === key.keyId
            ? {
                id: key.keyId,
                algs: [hmsAlg(key)],
                verify: createVerifier(createPublicKey(key.pubPem), hmsAlg(key)),
              }
            : null,
        requiredParams: ["created", "keyid"],
        requiredFields: required,
        notAfter: nowS + window,
        maxAge: window,
        tolerance: 0,
      },
      hmsRequest(msg),
    );
  } catch (error) {
    return `verifyMessage: ${error.name}: ${error.message}`;
  }
  if (ok !== true) return `verifyMessage returned ${ok}`;
  if (msg.body != null) return checkContentDigest(header(msg, "content-digest"), msg.body);
  return true;
}

// ---- flood ------------------------------------------------------------------------------

export class Flood {
  constructor(bin) {
    this.bin = bin;
    this.dir = mkdtempSync(join(tmpdir(), "flood-interop-"));
    this.n = 0;
  }

  close() {
    rmSync(this.dir, { recursive: true, force: true });
  }

  run(args) {
    const r = spawnSync(this.bin, args, { encoding: "utf8", timeout: 20000 });
    if (r.error) throw r.error;
    return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
  }

  bodyFile(body) {
    const path = join(this.dir, `body-${++this.n}`);
    writeFileSync(path, body);
    return path;
  }

  // `flood sign` prints the headers to add, "Name: value" a line.
  async sign(msg, key, { dialect, time }) {
    const args = ["sign", "--key", key.privPath, "--key-id", key.keyId, "--method", msg.method];
    args.push("--url", msg.url, "--dialect", dialect, "--time", String(time));
    if (msg.body != null) args.push("--body", this.bodyFile(msg.body));
    const ct = header(msg, "content-type");
    if (ct !== undefined) args.push("--content-type", ct);
    const r = this.run(args);
    if (r.code !== 0) {
      throw new Error(`flood ${args.join(" ")}: exit ${r.code ?? r.signal}: ${r.stderr.trim()}`);
    }
    let m = msg;
    for (const line of r.stdout.split("\n")) {
      if (line.trim() === "") continue;
      const colon = line.indexOf(":");
      if (colon <= 0) throw new Error(`flood sign printed a line that is no header: '${line}'`);
      m = withHeader(m, line.slice(0, colon).trim(), line.slice(colon + 1).trim());
    }
    return m;
  }

  // `flood verify`: exit 0 and "ok ..." when it accepts; exit 1 and
  // "flood: verify: <reason>: ..." on stderr when it refuses.
  async verify(msg, key, { now, window } = {}) {
    const args = ["verify", "--key", key.pubPath, "--method", msg.method, "--url", msg.url];
    if (msg.body != null) args.push("--body", this.bodyFile(msg.body));
    for (const [n, v] of msg.headers) args.push("--header", `${n}: ${v}`);
    if (now !== undefined) args.push("--now", String(now));
    if (window !== undefined) args.push("--window", String(window));
    const r = this.run(args);
    const said = `${r.stdout}${r.stderr}`.trim();
    if (r.code === 0 && /^ok\b/m.test(r.stdout)) return true;
    if (r.code === 1 && /flood: verify: /.test(r.stderr)) return `refused: ${said}`;
    return `exit ${r.code ?? r.signal}: ${said}`;
  }
}
