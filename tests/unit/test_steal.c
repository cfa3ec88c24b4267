/* tests/unit/test_steal.c: steal_parse on /proc/stat texts (proc(5): "cpuN user nice system
 * idle iowait irq softirq steal guest guest_nice", in ticks), and steal_now on this host. */
#include <string.h>

#include "flood/core/steal.h"
#include "tests/check.h"

static const char *STAT = "cpu  5151824 293781 1456722 8790229 12011 0 155559 135405 0 0\n"
                          "cpu0 2512124 113677 697935 4539364 2147 0 70911 72695 0 0\n"
                          "cpu1 2639700 180104 758786 4250864 9863 0 84648 62710 0 0\n"
                          "intr 123 4 5\n"
                          "ctxt 99\n";

int main(void)
{
    cpu_set_t set;
    double s = -1;
    int n = -1;

    CPU_ZERO(&set);
    CPU_SET(0, &set);
    CPU_SET(1, &set);
    CHECK(steal_parse(STAT, &set, 100, &s, &n) == 0, "both CPUs parse");
    CHECK(n == 2, "two CPUs counted (got %d)", n);
    CHECK(s == (72695.0 + 62710.0) / 100, "steal of both, not the total line's (got %.2f)", s);

    CPU_ZERO(&set);
    CPU_SET(1, &set);
    CHECK(steal_parse(STAT, &set, 100, &s, &n) == 0 && n == 1 && s == 627.10,
          "only the CPUs this process may run on (got %d, %.2f)", n, s);
    CHECK(steal_parse(STAT, &set, 250, &s, &n) == 0 && s == 62710.0 / 250,
          "ticks at the given rate (got %.3f)", s);

    CPU_ZERO(&set);
    CPU_SET(7, &set);
    CHECK(steal_parse(STAT, &set, 100, &s, &n) == -1, "a CPU the text does not list: none");

    /* before 2.6.11 a line had seven columns: no steal to read */
    CPU_ZERO(&set);
    CPU_SET(0, &set);
    CHECK(steal_parse("cpu0 1 2 3 4 5 6 7\ncpu1 1 2 3 4 5 6 7 8\n", &set, 100, &s, &n) == -1,
          "a line without the steal column is not read as one");
    CHECK(steal_parse("cpu0 1 2 3 4 5 6 7\ncpu1 1 2 3 4 5 6 7 8 9 10", &set, 100, &s, &n) == -1,
          "nor does the next line lend it one");
    CHECK(steal_parse("", &set, 100, &s, &n) == -1, "an empty text: none");
    CHECK(steal_parse("cpu0 1 2 3 4 5 6 7 8", &set, 0, &s, &n) == -1, "no tick rate: none");
    CHECK(steal_parse("cpu0 1 2 3 4 5 6 7 300", &set, 100, &s, &n) == 0 && s == 3.0 && n == 1,
          "a last line without its newline (got %.2f)", s);
    CHECK(steal_parse("cpux 1 2 3 4 5 6 7 8\ncpu 1 2 3 4 5 6 7 8\n", &set, 100, &s, &n) == -1,
          "neither a total line nor a malformed one is a CPU");

    double a = -1, b = -1;
    int na = 0, nb = 0;
    CHECK(steal_now(&a, &na) == 0 && na >= 1 && a >= 0, "this host's /proc/stat reads (%d CPUs)",
          na);
    CHECK(steal_now(&b, &nb) == 0 && b >= a && nb == na, "steal never goes back");
    return check_done();
}
