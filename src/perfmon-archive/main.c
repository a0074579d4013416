/* perfmon-archive: everything is in the library (src/archive/cli.c). */
#include "perfmon/archive.h"

int main(int argc, char **argv)
{
    return pm_archive_main(argc, argv);
}
