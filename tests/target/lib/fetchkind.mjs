// The kind of an outgoing GET, from its URL's path alone. flood's crowd classifies the GETs
// it serves with the same rule, so the two counts can be compared kind by kind.

export const FETCH_KINDS = [
    "webfinger",
    "nodeinfo",
    "actor",
    "key",
    "note",
    "collection",
    "avatar",
    "media",
    "link",
    "emoji",
    "other",
];

const COLLECTIONS = new Set(["inbox", "outbox", "followers", "following", "featured"]);

/* Returns one of FETCH_KINDS for url (a string or URL). The query and the fragment are not
 * looked at; a string that is not an absolute URL is "other". */
export function fetchKind(url) {
    let path;
    try {
        path = (url instanceof URL ? url : new URL(url)).pathname;
    } catch {
        return "other";
    }
    if (path === "/.well-known/webfinger" || path === "/.well-known/host-meta") return "webfinger";
    if (path === "/.well-known/nodeinfo" || path.startsWith("/nodeinfo/")) return "nodeinfo";
    if (path === "/actor") return "actor";
    if (path === "/actor/main-key") return "key";
    if (path.startsWith("/media/")) return "media";
    if (path.startsWith("/pages/")) return "link";
    if (path.startsWith("/emoji/")) return "emoji";
    const s = path.split("/"); /* "/users/NAME/x/..." -> ["", "users", "NAME", "x", ...] */
    if (s[1] !== "users" || s.length < 3 || s[2] === "") return "other";
    if (s.length === 3) return "actor";
    const sub = s[3];
    const rest = s.slice(4).join("/");
    if (s.length === 4 && sub === "main-key") return "key";
    if ((sub === "notes" || sub === "activities") && rest !== "") return "note";
    if (COLLECTIONS.has(sub)) return "collection";
    if (sub === "collections" && rest !== "") return "collection";
    if (sub.startsWith("avatar") || sub.startsWith("header")) return "avatar";
    return "other";
}
