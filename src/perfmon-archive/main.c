/* perfmon-archive: the driver is cli.c beside this file. */
#include "archive_cli.h"

int main(int argc, char **argv)
{
    return pm_archive_main(argc, argv);
}
