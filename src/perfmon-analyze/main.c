/* perfmon-analyze: the driver is cli.c beside this file. */
#include "analyze_cli.h"

int main(int argc, char **argv)
{
    return pm_analyze_main(argc, argv);
}
