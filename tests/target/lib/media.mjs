// Media the target accepts, and the check that fetched bytes are what they claim to be
// (by their magic number; images are never decoded).

const IMAGE_TYPES = {
    "image/png": "png",
    "image/jpeg": "jpeg",
    "image/jpg": "jpeg",
    "image/pjpeg": "jpeg",
    "image/gif": "gif",
    "image/webp": "webp",
};
const OCTET_TYPES = new Set([
    "application/octet-stream",
    "binary/octet-stream",
    "application/binary",
    "application/x-binary",
]);

/* The media type of a type string without parameters, lower case. */
export function bareType(t) {
    return typeof t === "string" ? t.split(";")[0].trim().toLowerCase() : "";
}

/* "png" | "jpeg" | "gif" | "webp" for an image type, "octet" for an opaque document, or
 * null for a type the target does not take (nothing is downloaded for those). */
export function mediaClass(type) {
    const t = bareType(type);
    if (IMAGE_TYPES[t]) return IMAGE_TYPES[t];
    if (OCTET_TYPES.has(t)) return "octet";
    return null;
}

/* The image format buf starts with, or null. */
export function sniff(buf) {
    if (!buf || buf.length < 4) return null;
    if (buf.length >= 8 && buf.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])))
        return "png";
    if (buf[0] === 0xff && buf[1] === 0xd8 && buf[2] === 0xff) return "jpeg";
    const head = buf.subarray(0, 12).toString("latin1");
    if (head.startsWith("GIF87a") || head.startsWith("GIF89a")) return "gif";
    if (buf.length >= 12 && head.startsWith("RIFF") && head.slice(8, 12) === "WEBP") return "webp";
    return null;
}

/* Whether bytes of class cls (from mediaClass) look right: images must carry their own
 * magic number, opaque documents may be anything. */
export function magicMatches(cls, buf) {
    if (cls === "octet") return true;
    return sniff(buf) === cls;
}
