/* flood/core/html.c: HTML and XML escaping (see html.h). */
#include "flood/core/html.h"

static void escape(FILE *f, const char *s, int xml)
{
    if (!s)
        return;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '&':
            fputs("&amp;", f);
            continue;
        case '<':
            fputs("&lt;", f);
            continue;
        case '>':
            fputs("&gt;", f);
            continue;
        case '"':
            fputs("&quot;", f);
            continue;
        case '\'':
            fputs("&#39;", f);
            continue;
        }
        if (!xml) {
            fputc(*p, f);
        } else if (*p == '\t' || *p == '\n' || *p == '\r') {
            fprintf(f, "&#%d;", *p);
        } else if (*p < 0x20) {
            fputc('?', f);
        } else if (p[0] == 0xEF && p[1] == 0xBF && (p[2] == 0xBE || p[2] == 0xBF)) {
            fputc('?', f);
            p += 2;
        } else {
            fputc(*p, f);
        }
    }
}

void html_escape(FILE *f, const char *s)
{
    escape(f, s, 0);
}

void html_escape_xml(FILE *f, const char *s)
{
    escape(f, s, 1);
}
