// Expands every activity flood sends under JSON-LD (the jsonld package, offline) and checks
// that no term was dropped or left undefined: each member name of the compact document (at
// any depth) must expand to an absolute IRI, and each `type` value too. The ActivityStreams
// context maps unknown terms to blank-node IRIs ("@vocab": "_:"), so a term flood forgot to
// declare (sensitive, Hashtag, Emoji, blurhash, votersCount...) shows up as "_:name"; a term
// with no mapping at all disappears from the expansion. Input: JSON lines
// {"kind": NAME, "doc": DOCUMENT} on stdin (tests/tools/dump_activities.c).
//
// Nothing is fetched: the document loader serves only the contexts Fedify ships
// (@fedify/fedify/esm/runtime/contexts.js) and refuses every other URL.
//
//   node jsonld.mjs < activities.jsonl
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { check, diag, summary } from "./lib/tap.mjs";

const require = createRequire(import.meta.url);
const jsonld = require("jsonld");
const contextsPath = new URL("./node_modules/@fedify/fedify/esm/runtime/contexts.js", import.meta.url);
const { default: preloaded } = await import(contextsPath.href);

const fetched = [];
const documentLoader = async (url) => {
  const doc = preloaded[url];
  if (!doc) {
    fetched.push(url);
    throw new Error(`not preloaded (nothing is fetched at run time): ${url}`);
  }
  return { contextUrl: null, documentUrl: url, document: doc };
};

// Every member name of a compact document, with its path, and every `type` value.
function compactTerms(node, path, out) {
  if (Array.isArray(node)) {
    node.forEach((v, i) => compactTerms(v, `${path}[${i}]`, out));
    return;
  }
  if (node === null || typeof node !== "object") return;
  for (const [k, v] of Object.entries(node)) {
    if (k === "@context") continue;
    out.push({ term: k, path: `${path}.${k}`, type: false });
    if (k === "type")
      for (const t of [v].flat()) out.push({ term: t, path: `${path}.type=${t}`, type: true });
    // contentMap's keys are languages, not terms
    if (k === "contentMap" || k === "nameMap" || k === "summaryMap") continue;
    compactTerms(v, `${path}.${k}`, out);
  }
}

// Every property IRI and @type IRI in an expanded document.
function expandedIris(node, props, types) {
  if (Array.isArray(node)) {
    for (const v of node) expandedIris(v, props, types);
    return;
  }
  if (node === null || typeof node !== "object") return;
  for (const [k, v] of Object.entries(node)) {
    if (k === "@type") for (const t of [v].flat()) types.add(t);
    else if (!k.startsWith("@")) props.add(k);
    if (k !== "@value") expandedIris(v, props, types);
  }
}

const absolute = (iri) => /^[a-z][a-z0-9+.-]*:/i.test(iri) && !iri.startsWith("_:");

// The IRI a term should map to, read from the document's own contexts (to know which
// expanded IRI stands for which compact term), by expanding {term: "x"} or {type: term}.
async function iriOf(ctx, term, type) {
  const probe = type ? { "@context": ctx, "@id": "urn:x", type: term } : { "@context": ctx, [term]: "x" };
  const e = await jsonld.expand(probe, { documentLoader });
  const node = e[0] ?? {};
  if (type) return (node["@type"] ?? [])[0] ?? null;
  return Object.keys(node).find((k) => !k.startsWith("@")) ?? (term === "id" ? "@id" : null);
}

const lines = readFileSync(0, "utf8").split("\n").filter((l) => l.trim());
const byKind = new Map();
for (const line of lines) {
  const { kind, doc } = JSON.parse(line);
  if (!byKind.has(kind)) byKind.set(kind, []);
  byKind.get(kind).push(doc);
}

for (const [kind, docs] of byKind) {
  await check(`${kind}: ${docs.length} documents expand with every term defined`, async () => {
    const problems = new Set();
    for (const doc of docs) {
      const expanded = await jsonld.expand(doc, { documentLoader });
      const props = new Set();
      const types = new Set();
      expandedIris(expanded, props, types);
      const terms = [];
      compactTerms(doc, "", terms);
      for (const { term, path, type } of terms) {
        if (!type && (term === "id" || term === "type")) continue;
        const iri = await iriOf(doc["@context"], term, type);
        if (!iri || !absolute(iri)) {
          problems.add(`${path}: '${term}' is not defined by the context (expands to ${iri ?? "nothing"})`);
          continue;
        }
        if (!(type ? types : props).has(iri)) problems.add(`${path}: '${term}' (${iri}) dropped from the expansion`);
      }
    }
    return problems.size ? [...problems].slice(0, 12).join("\n") : true;
  });
}

await check("nothing was fetched at run time", () =>
  fetched.length ? `refused fetches: ${[...new Set(fetched)].join(", ")}` : true,
);
await check("every kind present", () => (byKind.size >= 20 ? true : `only ${byKind.size} kinds`));
diag(`${lines.length} documents, ${byKind.size} kinds`);
process.exit(summary());
