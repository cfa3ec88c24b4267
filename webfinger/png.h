/* webfinger/png.h: the bytes of a struct wf_media (webfinger/media.h) as a PNG, made in
 * order, a chunk at a time, so an image of tens of megabytes never sits in memory: the
 * signature, IHDR (8-bit RGB), one IDAT holding a zlib stream of stored deflate blocks of
 * one colour (wf_media_rgb), a private ancillary "flPd" chunk of zeros padding the file
 * to m.bytes exactly when m.bytes is above the minimum, and IEND. CRC-32 and Adler-32 are
 * computed as the bytes go out. Pure: no I/O, no allocation, no global state. */
#ifndef FLOOD_WF_PNG_H
#define FLOOD_WF_PNG_H

#include <stddef.h>
#include <stdint.h>

#include "webfinger/wf.h"

#define WF_CT_PNG "image/png"

/* The generator's state: fill with wf_png_init, read with wf_png_read; no free needed. */
struct wf_png {
    uint32_t crc_table[256];
    uint8_t rgb[3];
    int part;          /* which part of the file comes next */
    uint8_t small[48]; /* the current fixed-size part (headers, checksums) */
    size_t small_len, small_off;
    uint64_t left;     /* bytes left of the current block or padding */
    uint64_t raw_left; /* scanline bytes not yet in a block */
    uint64_t row_len;  /* 1 + 3 * width: the filter byte and the pixels */
    uint64_t col;      /* position in the current row */
    unsigned chan;     /* 0..2: the next pixel byte's channel */
    uint64_t pad_len;  /* the flPd chunk's data bytes */
    int has_pad;
    uint32_t crc, adler_a, adler_b;
    uint64_t pos, size; /* bytes made so far, of size */
};

/* Start the image of m (valid: as wf_media_parse or wf_media_fit make it). */
void wf_png_init(struct wf_png *p, const struct wf_media *m);
/* The next bytes into buf[max]: how many (max unless the image ends), 0 at the end. */
size_t wf_png_read(struct wf_png *p, uint8_t *buf, size_t max);

#endif
