/* perfmon-sample: the driver is cli.c beside this file (and mark.c for
 * `perfmon-sample mark`). */
#include <string.h>

#include "sample_cli.h"

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "mark") == 0)
        return pm_mark_main(argc - 1, argv + 1);
    return pm_sample_main(argc, argv);
}
