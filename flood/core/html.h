/* flood/core/html.h: text escaped for HTML and XML, written to a stream: report.html,
 * capacity.html, the check card's HTML, its JUnit XML and flood matrix's page. */
#ifndef FLOOD_HTML_H
#define FLOOD_HTML_H

#include <stdio.h>

/* Write s to f with & < > " ' as entities (&amp; &lt; &gt; &quot; &#39;): safe in HTML
 * text and in a quoted attribute value. NULL writes nothing. */
void html_escape(FILE *f, const char *s);

/* The same, and safe in XML 1.0 too: tab, line feed and carriage return as character
 * references (an attribute value keeps them), the other C0 controls and U+FFFE, U+FFFF,
 * which XML 1.0 forbids (section 2.2), as '?'. NULL writes nothing. */
void html_escape_xml(FILE *f, const char *s);

#endif
