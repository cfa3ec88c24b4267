/* flood/core/steal.c: steal time from /proc/stat (see steal.h). */
#include "flood/core/steal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int steal_parse(const char *stat, const cpu_set_t *set, long hz, double *steal_s, int *cpus)
{
    unsigned long long ticks = 0;
    int n = 0;
    if (hz <= 0)
        return -1;
    for (const char *line = stat; line && *line;) {
        const char *next = strchr(line, '\n');
        /* "cpuN user nice system idle iowait irq softirq steal ...": "cpu " is the total */
        if (!strncmp(line, "cpu", 3) && line[3] >= '0' && line[3] <= '9') {
            char *end;
            unsigned long id = strtoul(line + 3, &end, 10);
            unsigned long long v[8];
            int k = 0;
            while (k < 8 && (!next || end < next)) {
                char *p = end;
                v[k] = strtoull(p, &end, 10);
                if (end == p)
                    break;
                k++;
            }
            if (k == 8 && id < CPU_SETSIZE && CPU_ISSET((int)id, set)) {
                ticks += v[7];
                n++;
            }
        }
        line = next ? next + 1 : NULL;
    }
    if (!n)
        return -1;
    *steal_s = (double)ticks / (double)hz;
    *cpus = n;
    return 0;
}

int steal_now(double *steal_s, int *cpus)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) != 0)
        return -1;
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return -1;
    /* the per-CPU lines come first, under 100 bytes each: 256 KB holds thousands */
    enum { STAT_MAX = 256 * 1024 };
    char *buf = malloc(STAT_MAX);
    size_t len = buf ? fread(buf, 1, STAT_MAX - 1, f) : 0;
    fclose(f);
    if (!buf)
        return -1;
    buf[len] = '\0';
    int rc = steal_parse(buf, &set, sysconf(_SC_CLK_TCK), steal_s, cpus);
    free(buf);
    return rc;
}
