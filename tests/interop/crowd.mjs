// Fedify's own client code reads flood's crowd documents: WebFinger (lookupWebFinger), actors
// and their keys (lookupObject, fetchKey, getKeyOwner), collections, NodeInfo (getNodeInfo,
// which parses and validates), and the instance actor. Expected values come from the
// ActivityPub, WebFinger and NodeInfo specifications and from the URL layout the crowd
// promises (SCHEME://floodK.test[:PUBLIC_PORT]/users/userJ), never from flood's output.
//
//   node crowd.mjs [--state DIR] --crowd JSON [--crowd JSON ...]
//
// With --state (the crowd's state folder), each sampled actor's served key is also put to
// use: the private key in DIR/keys/ whose public half it is signs a delivery, and Fedify's
// verifyRequest, fetching the key from the crowd, accepts it (a foreign key does not).
//
// Each --crowd names one running `flood serve`: {"scheme": "https"|"http", "listen":
// "127.0.0.1:PORT", "ca": "/path/ca.pem" (https), "publicPort": P (when started with
// --public-port P)}. At most one crowd per (scheme, public port) pair.
import { createPrivateKey, createPublicKey, generateKeyPairSync } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  Application,
  CryptographicKey,
  fetchKey,
  getDocumentLoader,
  getKeyOwner,
  getNodeInfo,
  lookupObject,
  lookupWebFinger,
  OrderedCollection,
  Person,
  signRequest,
  verifyRequest,
} from "@fedify/fedify";
import { Agent, buildConnector, setGlobalDispatcher } from "undici";
import { captureFedifyLogs, clearFedifyLogs, takeFedifyLogs } from "./lib/fedify_log.mjs";
import { all, check, diag, onFailure, same, summary } from "./lib/tap.mjs";

const AS_JSON = "application/activity+json";
const NODEINFO_20 = "http://nodeinfo.diaspora.software/ns/schema/2.0";
const NODEINFO_21 = "http://nodeinfo.diaspora.software/ns/schema/2.1";

// Instances and actors looked at in each crowd: the first, a middle and the last of the
// default 20 x 10 crowd, so an off-by-one in the host or actor tables shows.
const SAMPLES = [
  { k: 1, j: 1 },
  { k: 7, j: 3 },
  { k: 20, j: 10 },
];
const UNKNOWN_INSTANCE = 21; // one past --instances 20
const UNKNOWN_ACTOR = 11; // one past --actors 10

function parseArgs(argv) {
  const crowds = [];
  let state = null;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--state" && i + 1 < argv.length) {
      state = argv[++i];
    } else if (argv[i] === "--crowd" && i + 1 < argv.length) {
      const c = JSON.parse(argv[++i]);
      const m = /^(.+):(\d+)$/.exec(c.listen ?? "");
      if (!m || (c.scheme !== "http" && c.scheme !== "https")) {
        throw new Error(`crowd: bad --crowd '${argv[i]}'`);
      }
      c.listenHost = m[1];
      c.listenPort = Number(m[2]);
      c.publicPort = c.publicPort ? Number(c.publicPort) : null;
      c.caPem = c.ca ? readFileSync(c.ca, "utf8") : undefined;
      crowds.push(c);
    } else {
      throw new Error(`crowd: unknown argument '${argv[i]}'`);
    }
  }
  if (crowds.length === 0) throw new Error("crowd: give at least one --crowd");
  return { crowds, state };
}

// Every private key PEM under DIR/keys, by the DER of its public half.
function stateKeys(dir) {
  const byPublic = new Map();
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, e.name);
      if (e.isDirectory()) walk(path);
      else if (e.name.endsWith(".pem")) {
        let priv;
        try {
          priv = createPrivateKey(readFileSync(path));
        } catch {
          continue; // not a private key: no match for it
        }
        const spki = createPublicKey(priv).export({ type: "spki", format: "der" });
        byPublic.set(spki.toString("base64"), priv);
      }
    }
  };
  walk(join(dir, "keys"));
  return byPublic;
}

// An RSA key the crowd does not have (made once).
let foreign = null;
function foreignKey() {
  foreign ??= generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey;
  return foreign;
}

async function subtlePrivate(priv) {
  const der = priv.export({ type: "pkcs8", format: "der" });
  const alg = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" };
  return crypto.subtle.importKey("pkcs8", der, alg, true, ["sign"]);
}

// A Follow delivered to another crowd actor's inbox, signed with priv under keyId, then
// verified by Fedify the way a target verifies flood's deliveries: the key fetched by
// its id from the crowd. Returns the verified key's id or null.
async function deliverAndVerify(c, actorId, keyId, priv, opts) {
  const inbox = `${origin(c, 2)}/users/user2/inbox`;
  const body = JSON.stringify({
    "@context": "https://www.w3.org/ns/activitystreams",
    id: `${actorId}#follows/interop`,
    type: "Follow",
    actor: actorId,
    object: `${origin(c, 2)}/users/user2`,
  });
  const request = new Request(inbox, {
    method: "POST",
    headers: { "Content-Type": AS_JSON },
    body,
  });
  const signed = await signRequest(request, await subtlePrivate(priv), new URL(keyId));
  const key = await verifyRequest(signed, opts);
  return key?.id?.href ?? null;
}

// Every *.test host goes to the listener of the crowd serving that scheme and port; the
// request keeps its public Host header and TLS server name. Anything else is refused, so
// nothing leaves the machine (and a document that needs a remote JSON-LD context fails).
function route(crowds) {
  const connectors = new Map();
  for (const c of crowds) {
    const key = `${c.scheme}:${c.publicPort ?? ""}`;
    connectors.set(key, {
      crowd: c,
      connect: buildConnector(c.caPem ? { ca: c.caPem, rejectUnauthorized: true } : {}),
    });
  }
  const connect = (opts, callback) => {
    const name = opts.hostname.replace(/^\[|\]$/g, "");
    const scheme = opts.protocol.replace(/:$/, "");
    const entry = connectors.get(`${scheme}:${opts.port ?? ""}`);
    if (!/\.test$/i.test(name) || entry == null) {
      callback(new Error(`route: no crowd serves ${opts.protocol}//${name}:${opts.port}`), null);
      return;
    }
    const { crowd, connect: base } = entry;
    base(
      { ...opts, hostname: crowd.listenHost, port: crowd.listenPort, servername: name },
      callback,
    );
  };
  setGlobalDispatcher(new Agent({ connect, connections: 8 }));
}

function origin(c, k) {
  return `${c.scheme}://flood${k}.test${c.publicPort ? `:${c.publicPort}` : ""}`;
}

function href(u) {
  return u == null ? null : u.href;
}

// Fedify reads the publicKey; we check it is a 2048-bit RSA key node:crypto can import too.
async function checkKey(key, keyId, ownerId) {
  if (!(key instanceof CryptographicKey)) return `not a CryptographicKey: ${key}`;
  const v = all(same("key id", href(key.id), keyId), same("key owner", href(key.ownerId), ownerId));
  if (v !== true) return v;
  const pk = key.publicKey;
  if (pk == null) return "Fedify could not import publicKeyPem";
  if (pk.algorithm.name !== "RSASSA-PKCS1-v1_5") return `algorithm ${pk.algorithm.name}`;
  const spki = Buffer.from(await crypto.subtle.exportKey("spki", pk));
  const nodeKey = createPublicKey({ key: spki, format: "der", type: "spki" });
  return all(
    same("key type", nodeKey.asymmetricKeyType, "rsa"),
    same("modulus bits", nodeKey.asymmetricKeyDetails.modulusLength, 2048),
  );
}

async function checkCollection(got, want) {
  if (!(got instanceof OrderedCollection)) return `${want}: not an OrderedCollection (${got})`;
  const total = got.totalItems;
  return all(
    same("collection id", href(got.id), want),
    total == null || (Number.isInteger(total) && total >= 0) ? true : `totalItems ${total}`,
  );
}

async function crowdChecks(c, documentLoader, keysByPublic) {
  const label = `${c.scheme}${c.publicPort ? ` public port ${c.publicPort}` : ""}`;
  const opts = { documentLoader, contextLoader: documentLoader };

  for (const { k, j } of SAMPLES) {
    const host = `flood${k}.test`;
    const base = origin(c, k);
    const actorId = `${base}/users/user${j}`;
    const keyId = `${actorId}#main-key`;
    const acct = `acct:user${j}@${host}`;
    let person = null;

    // Fedify's lookupWebFinger always asks https://HOST for an acct: resource.
    if (c.scheme === "https" && !c.publicPort) {
      await check(`${label}: lookupWebFinger ${acct}`, async () => {
        const jrd = await lookupWebFinger(acct, { allowPrivateAddress: true });
        if (jrd == null) return "lookupWebFinger returned null";
        const self = (jrd.links ?? []).find((l) => l.rel === "self" && l.type === AS_JSON);
        return all(
          same("subject", jrd.subject, acct),
          self ? same("self href", self.href, actorId) : `no self link: ${JSON.stringify(jrd)}`,
        );
      });
      await check(`${label}: lookupObject ${acct} is the Person ${actorId}`, async () => {
        person = await lookupObject(acct, { ...opts, allowPrivateAddress: true });
        if (!(person instanceof Person)) return `not a Person: ${person}`;
        return same("id", href(person.id), actorId);
      });
    }

    await check(`${label}: lookupWebFinger by actor URL ${actorId}`, async () => {
      const jrd = await lookupWebFinger(actorId, { allowPrivateAddress: true });
      if (jrd == null) return "lookupWebFinger returned null";
      const self = (jrd.links ?? []).find((l) => l.rel === "self" && l.type === AS_JSON);
      return all(
        same("subject", jrd.subject, acct),
        self ? same("self href", self.href, actorId) : `no self link: ${JSON.stringify(jrd)}`,
      );
    });

    await check(`${label}: Person ${actorId} parsed by lookupObject`, async () => {
      const fetched = await lookupObject(actorId, opts);
      if (!(fetched instanceof Person)) return `not a Person: ${fetched}`;
      person = fetched;
      return all(
        same("id", href(person.id), actorId),
        same("preferredUsername", String(person.preferredUsername), `user${j}`),
        same("inbox", href(person.inboxId), `${actorId}/inbox`),
        same("outbox", href(person.outboxId), `${actorId}/outbox`),
        same("followers", href(person.followersId), `${actorId}/followers`),
        same("following", href(person.followingId), `${actorId}/following`),
        same("sharedInbox", href(person.endpoints?.sharedInbox), `${base}/inbox`),
        same("publicKey id", href(person.publicKeyId), keyId),
        same("publicKey count", person.publicKeyIds.length, 1),
      );
    });

    await check(
      `${label}: ${actorId} publicKey is an RSA-2048 CryptographicKey it owns`,
      async () => {
        if (person == null) return "no Person to read";
        return checkKey(await person.getPublicKey(opts), keyId, actorId);
      },
    );

    // What Fedify's verifyRequest does with a keyId from a Signature header.
    await check(`${label}: fetchKey and getKeyOwner of ${keyId}`, async () => {
      const { key } = await fetchKey(new URL(keyId), CryptographicKey, opts);
      const v = await checkKey(key, keyId, actorId);
      if (v !== true) return v;
      const owner = await getKeyOwner(new URL(keyId), opts);
      if (!(owner instanceof Person)) return `getKeyOwner: not a Person: ${owner}`;
      return same("owner id", href(owner.id), actorId);
    });

    if (keysByPublic) {
      await check(
        `${label}: ${keyId} is usable: a delivery signed with its private key verifies in Fedify`,
        async () => {
          const { key } = await fetchKey(new URL(keyId), CryptographicKey, opts);
          if (key?.publicKey == null) return "fetchKey found no key";
          const spki = Buffer.from(await crypto.subtle.exportKey("spki", key.publicKey));
          const priv = keysByPublic.get(spki.toString("base64"));
          if (priv == null) return "no private key in the state folder matches the served key";
          const got = await deliverAndVerify(c, actorId, keyId, priv, opts);
          return same("verifyRequest key", got, keyId);
        },
      );
      await check(
        `${label}: a delivery claiming ${keyId} but signed with another key is refused`,
        async () => {
          const got = await deliverAndVerify(c, actorId, keyId, foreignKey(), opts);
          return got == null ? true : `verifyRequest accepted it as ${got}`;
        },
      );
    }

    await check(
      `${label}: ${actorId} outbox, followers, following are OrderedCollections`,
      async () => {
        if (person == null) return "no Person to read";
        return all(
          await checkCollection(await person.getOutbox(opts), `${actorId}/outbox`),
          await checkCollection(await person.getFollowers(opts), `${actorId}/followers`),
          await checkCollection(await person.getFollowing(opts), `${actorId}/following`),
        );
      },
    );

    await check(`${label}: unknown actor user${UNKNOWN_ACTOR}@${host} is not found`, async () => {
      const wrong = `${base}/users/user${UNKNOWN_ACTOR}`;
      const obj = await lookupObject(wrong, opts);
      if (obj != null) return `lookupObject found ${obj}`;
      const jrd = await lookupWebFinger(wrong, { allowPrivateAddress: true });
      if (jrd != null) return `lookupWebFinger found ${JSON.stringify(jrd)}`;
      if (c.scheme === "https" && !c.publicPort) {
        const acctJrd = await lookupWebFinger(`acct:user${UNKNOWN_ACTOR}@${host}`, {
          allowPrivateAddress: true,
        });
        if (acctJrd != null) return `acct lookup found ${JSON.stringify(acctJrd)}`;
      }
      return true;
    });
  }

  for (const k of [1, 20]) {
    const base = origin(c, k);
    await check(`${label}: getNodeInfo ${base} (discovery, strict parse)`, async () => {
      const info = await getNodeInfo(base);
      if (info == null) return "getNodeInfo returned undefined (fetch or validation failed)";
      return all(
        typeof info.software?.name === "string" ? true : "software.name missing",
        info.protocols.includes("activitypub") ? true : `protocols ${info.protocols}`,
      );
    });
    await check(`${label}: .well-known/nodeinfo links 2.0 and 2.1, both valid`, async () => {
      const res = await fetch(`${base}/.well-known/nodeinfo`, {
        headers: { Accept: "application/json" },
      });
      if (!res.ok) return `status ${res.status}`;
      const links = (await res.json()).links ?? [];
      for (const [rel, path] of [
        [NODEINFO_20, "/nodeinfo/2.0"],
        [NODEINFO_21, "/nodeinfo/2.1"],
      ]) {
        const link = links.find((l) => l.rel === rel);
        if (!link) return `no ${rel} link`;
        const v = same(`${rel} href`, link.href, `${base}${path}`);
        if (v !== true) return v;
        const info = await getNodeInfo(link.href, { direct: true });
        if (info == null) return `${link.href}: Fedify's strict parse refused it`;
        if (!info.protocols.includes("activitypub")) return `${link.href}: no activitypub`;
      }
      return true;
    });
    await check(
      `${label}: instance actor ${base}/actor is an Application with its key`,
      async () => {
        const app = await lookupObject(`${base}/actor`, opts);
        if (!(app instanceof Application)) return `not an Application: ${app}`;
        const v = same("id", href(app.id), `${base}/actor`);
        if (v !== true) return v;
        return checkKey(await app.getPublicKey(opts), `${base}/actor#main-key`, `${base}/actor`);
      },
    );
  }

  // Negative twins: an instance the crowd does not have answers nothing, never another
  // instance's documents.
  const stranger = origin(c, UNKNOWN_INSTANCE);
  await check(
    `${label}: unknown instance flood${UNKNOWN_INSTANCE}.test serves nothing`,
    async () => {
      const obj = await lookupObject(`${stranger}/users/user1`, opts);
      if (obj != null) return `lookupObject found ${obj}`;
      if (c.scheme === "https" && !c.publicPort) {
        const jrd = await lookupWebFinger(`acct:user1@flood${UNKNOWN_INSTANCE}.test`, {
          allowPrivateAddress: true,
        });
        if (jrd != null) return `lookupWebFinger found ${JSON.stringify(jrd)}`;
      }
      const info = await getNodeInfo(stranger);
      if (info != null) return `getNodeInfo found ${JSON.stringify(info)}`;
      const app = await lookupObject(`${stranger}/actor`, opts);
      if (app != null) return `instance actor found ${app}`;
      return true;
    },
  );
}

async function main() {
  const { crowds, state } = parseArgs(process.argv.slice(2));
  const keysByPublic = state ? stateKeys(state) : null;
  await captureFedifyLogs();
  onFailure(takeFedifyLogs);
  route(crowds);
  // *.test names resolve nowhere, so Fedify's check that a URL is public (a DNS lookup)
  // must be off; the routing above decides where requests go.
  const documentLoader = getDocumentLoader({ allowPrivateAddress: true });
  for (const c of crowds) {
    const pub = c.publicPort ? `, public port ${c.publicPort}` : "";
    diag(`crowd ${c.scheme} listening on ${c.listen}${pub}`);
    clearFedifyLogs();
    await crowdChecks(c, documentLoader, keysByPublic);
  }
  return summary();
}

main().then(
  (code) => process.exit(code),
  (error) => {
    process.stdout.write(`not ok 0 - crowd.mjs: ${error?.stack ?? error}\n`);
    process.exit(1);
  },
);
