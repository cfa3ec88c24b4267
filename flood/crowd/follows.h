/* flood/crowd/follows.h: who follows the crowd's actors, and whom they follow. Thread-safe: the
 * server's threads and the sender update it through one mutex. Follower and followee are
 * actor id URLs of the target; crowd actors are named by their global index. */
#ifndef FLOOD_FOLLOWS_H
#define FLOOD_FOLLOWS_H

#include <stddef.h>
#include <stdint.h>

struct follows;

/* A new empty table for n crowd actors (free with follows_free). */
struct follows *follows_new(uint64_t n_actors);
void follows_free(struct follows *f);

/* Add (1 if new, 0 if already there) or remove (1 if it was there) a remote follower
 * of crowd actor idx. Only the first FOLLOWS_MAX_PER_ACTOR are kept per actor. */
#define FOLLOWS_MAX_PER_ACTOR 10000
int follows_add(struct follows *f, uint64_t idx, const char *remote_actor);
int follows_remove(struct follows *f, uint64_t idx, const char *remote_actor);
int follows_has(struct follows *f, uint64_t idx, const char *remote_actor);

/* The same for whom crowd actor idx follows (accepted follows of the target's actors). */
int following_add(struct follows *f, uint64_t idx, const char *remote_actor);
int following_remove(struct follows *f, uint64_t idx, const char *remote_actor);

/* A copy of crowd actor idx's followers (followers != 0) or following, as a new array of
 * new strings (free with follows_list_free), count in *n. */
char **follows_list(struct follows *f, uint64_t idx, int followers, size_t *n);
void follows_list_free(char **list, size_t n);

#endif
