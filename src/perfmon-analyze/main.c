/* perfmon-analyze: everything is in the library (src/analysis/cli.c). */
#include "perfmon/analysis.h"

int main(int argc, char **argv)
{
    return pm_analyze_main(argc, argv);
}
