/* webfinger/png.c: a PNG of one colour, made in order (see png.h). PNG: RFC 2083 /
 * W3C PNG 2nd ed.; zlib: RFC 1950; stored deflate blocks: RFC 1951 section 3.2.4. */
#include "webfinger/png.h"

#include <string.h>

#include "webfinger/media.h"

#define PNG_STORED_BLOCK 65535u

enum png_part {
    P_HEAD,      /* signature, IHDR, the IDAT chunk's length and type */
    P_ZHDR,      /* the zlib header */
    P_BLOCK_HDR, /* a stored block's header: BFINAL/BTYPE, LEN, NLEN */
    P_BLOCK,     /* its scanline bytes */
    P_ADLER,     /* the zlib trailer */
    P_IDAT_CRC,  /* the IDAT chunk's CRC */
    P_PAD_HDR,   /* the flPd chunk's length and type */
    P_PAD,       /* its zeros */
    P_PAD_CRC,   /* its CRC */
    P_IEND,      /* the IEND chunk */
    P_DONE,
};

static void be32(uint8_t *b, uint32_t v)
{
    b[0] = (uint8_t)(v >> 24);
    b[1] = (uint8_t)(v >> 16);
    b[2] = (uint8_t)(v >> 8);
    b[3] = (uint8_t)v;
}

static uint32_t crc_feed(const uint32_t *t, uint32_t crc, const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        crc = t[(crc ^ b[i]) & 0xff] ^ (crc >> 8);
    return crc;
}

/* The CRC of a whole small chunk (type and data), as a finished value. */
static uint32_t crc_of(const uint32_t *t, const uint8_t *b, size_t n)
{
    return crc_feed(t, 0xffffffffu, b, n) ^ 0xffffffffu;
}

static void adler_feed(struct wf_png *p, const uint8_t *b, size_t n)
{
    /* 5552 bytes: the most that cannot overflow 32 bits before the modulo (zlib's NMAX) */
    while (n) {
        size_t k = n < 5552 ? n : 5552;
        for (size_t i = 0; i < k; i++) {
            p->adler_a += b[i];
            p->adler_b += p->adler_a;
        }
        p->adler_a %= 65521;
        p->adler_b %= 65521;
        b += k;
        n -= k;
    }
}

static void set_small(struct wf_png *p, int part, const uint8_t *b, size_t n)
{
    p->part = part;
    memcpy(p->small, b, n);
    p->small_len = n;
    p->small_off = 0;
}

static void enter(struct wf_png *p, int part)
{
    uint8_t b[48];
    switch (part) {
    case P_ZHDR:
        /* CMF 0x78 (deflate, 32 KiB window), FLG 0x01: 0x7801 is a multiple of 31 */
        set_small(p, part, (const uint8_t *)"\x78\x01", 2);
        return;
    case P_BLOCK_HDR: {
        uint32_t n = p->raw_left < PNG_STORED_BLOCK ? (uint32_t)p->raw_left : PNG_STORED_BLOCK;
        b[0] = p->raw_left == n; /* BFINAL on the last, BTYPE 00: stored */
        b[1] = (uint8_t)n;
        b[2] = (uint8_t)(n >> 8);
        b[3] = (uint8_t)~n;
        b[4] = (uint8_t)(~n >> 8);
        p->left = n;
        p->raw_left -= n;
        set_small(p, part, b, 5);
        return;
    }
    case P_BLOCK:
    case P_PAD:
        p->part = part;
        if (p->left == 0)
            enter(p, part == P_BLOCK ? (p->raw_left ? P_BLOCK_HDR : P_ADLER) : P_PAD_CRC);
        return;
    case P_ADLER:
        be32(b, p->adler_b << 16 | p->adler_a);
        set_small(p, part, b, 4);
        return;
    case P_IDAT_CRC:
        be32(b, p->crc ^ 0xffffffffu);
        set_small(p, part, b, 4);
        return;
    case P_PAD_HDR:
        if (!p->has_pad) {
            enter(p, P_IEND);
            return;
        }
        be32(b, (uint32_t)p->pad_len);
        memcpy(b + 4, "flPd", 4); /* ancillary, private, safe to copy: decoders skip it */
        p->crc = crc_feed(p->crc_table, 0xffffffffu, b + 4, 4);
        p->left = p->pad_len;
        set_small(p, part, b, 8);
        return;
    case P_PAD_CRC:
        be32(b, p->crc ^ 0xffffffffu);
        set_small(p, part, b, 4);
        return;
    case P_IEND:
        memcpy(b, "\0\0\0\0IEND", 8);
        be32(b + 8, crc_of(p->crc_table, b + 4, 4));
        set_small(p, part, b, 12);
        return;
    default:
        p->part = P_DONE;
        return;
    }
}

/* The part after a finished one. */
static void next(struct wf_png *p)
{
    switch (p->part) {
    case P_HEAD:
        enter(p, P_ZHDR);
        break;
    case P_ZHDR:
        enter(p, P_BLOCK_HDR);
        break;
    case P_BLOCK_HDR:
        enter(p, P_BLOCK);
        break;
    case P_BLOCK:
        enter(p, p->raw_left ? P_BLOCK_HDR : P_ADLER);
        break;
    case P_ADLER:
        enter(p, P_IDAT_CRC);
        break;
    case P_IDAT_CRC:
        enter(p, P_PAD_HDR);
        break;
    case P_PAD_HDR:
        enter(p, P_PAD);
        break;
    case P_PAD:
        enter(p, P_PAD_CRC);
        break;
    case P_PAD_CRC:
        enter(p, P_IEND);
        break;
    default:
        p->part = P_DONE;
        break;
    }
}

void wf_png_init(struct wf_png *p, const struct wf_media *m)
{
    memset(p, 0, sizeof(*p));
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
        p->crc_table[n] = c;
    }
    wf_media_rgb(m->id, p->rgb);
    p->row_len = 1 + 3 * (uint64_t)m->width;
    p->raw_left = p->row_len * m->height;
    p->size = m->bytes;
    uint64_t min = wf_media_min_bytes(m->width, m->height);
    p->has_pad = m->bytes > min;
    p->pad_len = p->has_pad ? m->bytes - min - 12 : 0;
    p->adler_a = 1;

    uint8_t b[48];
    memcpy(b, "\x89PNG\r\n\x1a\n", 8);
    be32(b + 8, 13);
    memcpy(b + 12, "IHDR", 4);
    be32(b + 16, m->width);
    be32(b + 20, m->height);
    memcpy(b + 24, "\x08\x02\x00\x00\x00", 5); /* 8 bits, RGB, deflate, no filter, no interlace */
    be32(b + 29, crc_of(p->crc_table, b + 12, 17));
    uint64_t blocks = (p->raw_left + PNG_STORED_BLOCK - 1) / PNG_STORED_BLOCK;
    be32(b + 33, (uint32_t)(2 + p->raw_left + 5 * blocks + 4));
    memcpy(b + 37, "IDAT", 4);
    p->crc = crc_feed(p->crc_table, 0xffffffffu, b + 37, 4);
    set_small(p, P_HEAD, b, 41);
}

/* Scanline bytes: each row a filter byte (0, None) and width pixels of one colour. */
static void scanlines(struct wf_png *p, uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p->col == 0) {
            b[i] = 0;
        } else {
            b[i] = p->rgb[p->chan];
            p->chan = p->chan == 2 ? 0 : p->chan + 1;
        }
        if (++p->col == p->row_len)
            p->col = 0;
    }
}

size_t wf_png_read(struct wf_png *p, uint8_t *buf, size_t max)
{
    size_t n = 0;
    while (n < max && p->part != P_DONE) {
        size_t k;
        if (p->part == P_BLOCK || p->part == P_PAD) {
            k = max - n < p->left ? max - n : (size_t)p->left;
            if (p->part == P_BLOCK) {
                scanlines(p, buf + n, k);
                adler_feed(p, buf + n, k);
            } else {
                memset(buf + n, 0, k);
            }
            p->crc = crc_feed(p->crc_table, p->crc, buf + n, k);
            p->left -= k;
            n += k;
            if (!p->left)
                next(p);
            continue;
        }
        k = p->small_len - p->small_off;
        if (k > max - n)
            k = max - n;
        memcpy(buf + n, p->small + p->small_off, k);
        /* the IDAT chunk's CRC covers the zlib stream */
        if (p->part == P_ZHDR || p->part == P_BLOCK_HDR || p->part == P_ADLER)
            p->crc = crc_feed(p->crc_table, p->crc, buf + n, k);
        p->small_off += k;
        n += k;
        if (p->small_off == p->small_len)
            next(p);
    }
    p->pos += n;
    return n;
}
