/* flood/crowd/tls_sni.h: a leaf certificate per instance, chosen by the TLS client's SNI, for
 * a big crowd whose names share no parent a wildcard could cover ('flood%d.test' with
 * thousands of instances; tls.h says when).
 *
 * Each leaf names one instance, has its own EC P-256 key and is signed by the crowd's CA. It
 * is made on first use, or read back from STATE/leaves/HOST.pem (certificate then key, mode
 * 0600) when that file still holds a valid leaf of this CA for HOST; either way it is kept
 * in memory for the process's life. The first instance's leaf is had at start (so a CA or
 * folder that does not work is an error then), the next ones up to TLS_SNI_AHEAD in a
 * thread beside the server's start, so the handshakes a run begins with find them made. A handshake
 * without SNI, or naming no instance, gets a leaf naming localhost, 127.0.0.1 and ::1.
 * Processes sharing a state folder each put a file in place whole (written aside, renamed):
 * the last one stays, and every one of them is valid. */
#ifndef FLOOD_TLS_SNI_H
#define FLOOD_TLS_SNI_H

#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>

#include "flood/crowd/tls.h"
#include "webfinger/wf.h"

#define TLS_SNI_AHEAD 128 /* leaves made or read at start */

struct tls_sni_stats {
    unsigned long long made, read, failed; /* leaves made, read back, that could not be had */
};

struct tls_sni;

/* The CA of state_dir (made when missing; *made_ca says so, ca_path its file), the first
 * instance's leaf, and a thread making the next ones up to TLS_SNI_AHEAD. wf is borrowed for the
 * result's life. A new table (tls_sni_free), or NULL and err. */
struct tls_sni *tls_sni_new(const char *state_dir, const struct wf_crowd *wf,
                            char ca_path[TLS_PATH_MAX], int *made_ca,
                            struct flood_err *err) FLOOD_WUR;
void tls_sni_free(struct tls_sni *t);
void tls_sni_get_stats(struct tls_sni *t, struct tls_sni_stats *out);

/* GnuTLS's certificate callback (gnutls_certificate_retrieve_function2, given to
 * libmicrohttpd as MHD_OPTION_HTTPS_CERT_CALLBACK) over the table last made active with
 * tls_sni_activate: the callback carries no pointer of its own, and a process serves one
 * crowd. */
void tls_sni_activate(struct tls_sni *t);
int tls_sni_retrieve(gnutls_session_t session, const gnutls_datum_t *req_ca_rdn, int nreqs,
                     const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length,
                     gnutls_pcert_st **pcert, unsigned int *pcert_length, gnutls_privkey_t *pkey);

#endif
