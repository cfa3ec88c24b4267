/* flood/dash/dash_http.c: the dashboard's answers (a body and its type, a JSON error), used by
 * the server (dash.c) and the API (dash_api.c). */
#include <stdlib.h>
#include <string.h>

#include "flood/dash/dash_internal.h"

enum MHD_Result dash_answer(struct MHD_Connection *c, unsigned status, char *body, const char *type)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

enum MHD_Result dash_error(struct MHD_Connection *c, unsigned status, const char *msg)
{
    json_t *o = json_pack("{s:s}", "error", msg);
    char *s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    char *body = flood_xasprintf("%s\n", s ? s : "{}");
    free(s);
    return dash_answer(c, status, body, "application/json");
}
